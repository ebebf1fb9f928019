"""Keeping the tables that strangers can grow bounded: rate counters and failed logins.

Anyone can add rows here without an account: a made-up token adds (in the database store) a
rate counter row for its address's window, a failed login with a made-up username adds a
django-axes attempt row for that username and address. The scheduled cleanup (`access_cleanup`,
every ACCESS_CLEANUP_SECONDS from Celery beat or the in-server scheduler: docs/jobs.md) keeps
them to a documented bound (docs/operations.md, "Bounded tables"):

- rate counters: only the windows that are still running (the cache store expires its keys by
  itself; the database store's rows of finished windows are deleted here);
- login attempts: those of the cool-off period (AXES_COOLOFF_TIME; older ones lock nobody out),
  and of those, for usernames no account has, only the newest LOGIN_UNKNOWN_ATTEMPTS_MAX
  (a lockout of a name that does not exist protects nothing);
- the successful-login log: LOGIN_LOG_DAYS.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from axes.models import AccessAttempt, AccessLog
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from . import ratelimit
from .models import RateCounter

logger = logging.getLogger(__name__)


def access_tables_clean(*, now=None) -> dict:
    """Delete what the bound leaves out; returns how many rows of each table went."""
    now = now or timezone.now()
    counters, _ = RateCounter.objects.filter(expires_at__lte=now).delete()
    expired, _ = AccessAttempt.objects.filter(
        attempt_time__lte=now - settings.AXES_COOLOFF_TIME
    ).delete()
    User = get_user_model()
    unknown = AccessAttempt.objects.exclude(
        username__in=User.objects.values(User.USERNAME_FIELD)
    ).order_by("-attempt_time", "-id")
    kept = unknown.values("id")[: settings.LOGIN_UNKNOWN_ATTEMPTS_MAX]
    unknown_over, _ = AccessAttempt.objects.filter(
        id__in=unknown.exclude(id__in=kept).values("id")
    ).delete()
    logs, _ = AccessLog.objects.filter(
        attempt_time__lte=now - timedelta(days=settings.LOGIN_LOG_DAYS)
    ).delete()
    changes = {
        "rate_counters_deleted": counters,
        "login_attempts_deleted": expired + unknown_over,
        "login_logs_deleted": logs,
    }
    logger.info("access tables cleaned: %s", changes)
    return changes


def access_table_sizes() -> dict:
    """Row counts of the bounded tables, with the bound of the unknown-username attempts
    (shown in /healthz: each table is small by construction, so counting is cheap)."""
    return {
        # With the cache store the counters are cache keys that expire with their window.
        "rate_limit_store": "cache" if ratelimit.uses_cache() else "database",
        "rate_counters": RateCounter.objects.count(),
        "login_attempts": AccessAttempt.objects.count(),
        "login_attempts_unknown_max": settings.LOGIN_UNKNOWN_ATTEMPTS_MAX,
        "login_logs": AccessLog.objects.count(),
    }
