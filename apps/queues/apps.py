from __future__ import annotations

from django.apps import AppConfig


class QueuesConfig(AppConfig):
    name = "apps.queues"
    label = "queues"
    verbose_name = "Curator queues"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.jobs.services import register_job

        from .jobs import NEAR_DUPLICATES_JOB, near_duplicates_update

        register_job(NEAR_DUPLICATES_JOB, near_duplicates_update)
