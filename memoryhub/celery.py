"""The Celery app. With CELERY_BROKER_URL unset, tasks run eagerly in-process."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")

app = Celery("memoryhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
