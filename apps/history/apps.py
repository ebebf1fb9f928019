from __future__ import annotations

from django.apps import AppConfig


class HistoryConfig(AppConfig):
    name = "apps.history"
    verbose_name = "History"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.core.changes import register_recorder
        from apps.jobs.models import Job
        from apps.jobs.services import register_job

        from .purge import trash_purge_update
        from .recording import HistoryRecorder

        register_job(Job.TRASH_PURGE, trash_purge_update)
        register_recorder(HistoryRecorder())
