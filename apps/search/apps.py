from django.apps import AppConfig


class SearchConfig(AppConfig):
    name = "apps.search"
    label = "search"

    def ready(self) -> None:
        from . import jobs  # here: the job registry needs the models, loaded once apps are ready

        jobs.register()
