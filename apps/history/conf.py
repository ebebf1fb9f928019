"""History settings, read once (STYLE: one typed object per concern)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class HistorySettings:
    trash_days: int


def history_settings() -> HistorySettings:
    return HistorySettings(trash_days=settings.HISTORY_TRASH_DAYS)
