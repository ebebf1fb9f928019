from __future__ import annotations

from django.apps import AppConfig

from apps.core.changes import register_recorder


class HistoryConfig(AppConfig):
    name = "apps.history"
    verbose_name = "History"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The purge job and the recorder read models, which Django lets a module import only
        # once every app is loaded, after apps.py itself.
        from . import purge, recording

        purge.register()
        register_recorder(recording.HistoryRecorder())
