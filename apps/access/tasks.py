"""Celery tasks of the access app: the scheduled cleanup of the tables strangers can grow."""

from __future__ import annotations

from celery import shared_task

from .cleanup import access_tables_clean


@shared_task
def access_cleanup_task() -> dict:
    """Rate counters of finished windows and login attempts past their bound (cleanup.py)."""
    return access_tables_clean()
