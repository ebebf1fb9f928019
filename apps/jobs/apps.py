from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "apps.jobs"
    label = "jobs"

    def ready(self) -> None:
        from apps.core.health import register_health_check

        from .selectors import jobs_state

        register_health_check("jobs", jobs_state)
