from django.apps import AppConfig

from apps.core.health import register_health_check


class JobsConfig(AppConfig):
    name = "apps.jobs"
    label = "jobs"

    def ready(self) -> None:
        # The health check reads JobRun, which Django lets a module import only once every app
        # is loaded, after apps.py itself.
        from .selectors import jobs_state

        register_health_check("jobs", jobs_state)
