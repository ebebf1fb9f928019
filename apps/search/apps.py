from django.apps import AppConfig


class SearchConfig(AppConfig):
    name = "apps.search"
    label = "search"

    def ready(self) -> None:
        from . import jobs

        jobs.register()
