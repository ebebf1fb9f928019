"""Celery tasks of the OAuth app: expired grants and tokens cleared on the schedule."""

from __future__ import annotations

from celery import shared_task

from .cleanup import oauth_tokens_clear


@shared_task
def oauth_cleartokens_task() -> dict:
    return oauth_tokens_clear()
