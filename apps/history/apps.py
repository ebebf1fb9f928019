from __future__ import annotations

from django.apps import AppConfig


class HistoryConfig(AppConfig):
    name = "apps.history"
    verbose_name = "History"
    default_auto_field = "django.db.models.BigAutoField"
