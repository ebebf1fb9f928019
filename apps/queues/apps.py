from __future__ import annotations

from django.apps import AppConfig


class QueuesConfig(AppConfig):
    name = "apps.queues"
    label = "queues"
    verbose_name = "Curator queues"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The job reads models, which Django lets a module import only once every app is
        # loaded, after apps.py itself.
        from . import jobs

        jobs.register()
