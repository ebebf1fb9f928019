"""The tables strangers can grow without an account stay bounded: failed logins with made-up
usernames (django-axes attempts), made-up tokens (rate counters, the database store), and
expired OAuth grants and tokens. One run of the scheduled cleanups (the entries the in-server
scheduler and Celery beat run) brings them to the bound docs/operations.md documents, and
/healthz shows their sizes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

from apps.access.cleanup import access_tables_clean
from apps.access.models import RateCounter
from memoryhub.celery import app as celery_app
from memoryhub.schedule import server_schedule

pytestmark = pytest.mark.django_db

ADDRESSES = [f"198.18.{i // 200}.{i % 200 + 1}" for i in range(300)]


def run_scheduled_cleanups() -> None:
    """One run of each cleanup, taken from the schedule itself (so it is on it)."""
    entries = {e.name: e for e in server_schedule()}
    entries["access-cleanup"].call()
    entries["oauth-cleartokens"].call()


def oauth_rows(user, *, expired: bool, n: int) -> None:
    app, _ = Application.objects.get_or_create(
        client_id="bounded-client",
        defaults={
            "name": "bounded",
            "client_type": Application.CLIENT_PUBLIC,
            "authorization_grant_type": Application.GRANT_AUTHORIZATION_CODE,
            "redirect_uris": "http://127.0.0.1/cb",
        },
    )
    # Expired grants and access tokens; refresh tokens revoked longer ago than they live.
    when = timezone.now() + (timedelta(hours=-2) if expired else timedelta(hours=1))
    refresh_life = settings.OAUTH2_PROVIDER["REFRESH_TOKEN_EXPIRE_SECONDS"]
    long_ago = timezone.now() - timedelta(seconds=refresh_life + 3600)
    tag = "old" if expired else "live"
    for i in range(n):
        Grant.objects.create(
            user=user,
            application=app,
            code=f"{tag}-code-{i}",
            expires=when,
            redirect_uri="http://127.0.0.1/cb",
            code_challenge="x" * 43,
            code_challenge_method="S256",
        )
        access = AccessToken.objects.create(
            user=user, application=app, token=f"{tag}-access-{i}", expires=when, scope="mcp"
        )
        refresh = RefreshToken.objects.create(
            user=user, application=app, token=f"{tag}-refresh-{i}", access_token=access
        )
        if expired:
            RefreshToken.objects.filter(pk=refresh.pk).update(revoked=long_ago, access_token=None)
            AccessToken.objects.filter(pk=access.pk).update(created=long_ago)


def test_made_up_logins_and_tokens_stay_within_the_documented_bound(client):
    User = get_user_model()
    owner = User.objects.create_user("owner", password="right-password-1")
    # The owner mistyped twice: those attempts must survive (they count towards a lockout).
    for _ in range(2):
        client.post("/admin/login/", {"username": "owner", "password": "typo"})
    for i in range(1000):
        client.post(
            "/admin/login/",
            {"username": f"nobody-{i}", "password": "guess"},
            REMOTE_ADDR=ADDRESSES[i % 300],
        )
    for i in range(1000):
        r = client.get(
            "/api/v1/namespaces/",
            HTTP_AUTHORIZATION=f"Bearer mh_madeup{i}",
            REMOTE_ADDR=ADDRESSES[i % 300],
        )
        assert r.status_code == 401
    oauth_rows(owner, expired=True, n=50)
    oauth_rows(owner, expired=False, n=3)
    assert AccessAttempt.objects.count() == 1001
    assert RateCounter.objects.count() >= 300

    run_scheduled_cleanups()

    # Login attempts: the owner's, plus at most LOGIN_UNKNOWN_ATTEMPTS_MAX for made-up names
    # (the newest ones).
    unknown_max = settings.LOGIN_UNKNOWN_ATTEMPTS_MAX
    assert unknown_max == 500
    assert AccessAttempt.objects.filter(username="owner").get().failures_since_start == 2
    assert AccessAttempt.objects.exclude(username="owner").count() == unknown_max
    assert AccessAttempt.objects.filter(username="nobody-999").exists()
    assert not AccessAttempt.objects.filter(username="nobody-0").exists()
    # Rate counters: the running window only, at most one row per address.
    assert RateCounter.objects.count() <= len(ADDRESSES)
    assert not RateCounter.objects.filter(expires_at__lte=timezone.now()).exists()
    # OAuth: only the live grants and tokens.
    assert Grant.objects.count() == AccessToken.objects.count() == 3
    assert RefreshToken.objects.count() == 3

    response = client.get("/healthz")
    assert response.status_code == 200
    health = response.json()
    assert health["access_tables"]["login_attempts"] == 1 + unknown_max
    assert health["access_tables"]["login_attempts_unknown_max"] == unknown_max
    assert health["access_tables"]["rate_counters"] == RateCounter.objects.count()
    assert health["oauth_tables"]["grants"] == 3
    assert health["oauth_tables"]["access_tokens"] == 3


def test_attempts_past_the_cool_off_and_counters_of_ended_windows_go(client):
    client.post("/admin/login/", {"username": "nobody", "password": "guess"})
    client.get("/api/v1/namespaces/", HTTP_AUTHORIZATION="Bearer mh_madeup")
    assert AccessAttempt.objects.count() == RateCounter.objects.count() == 1
    later = timezone.now() + settings.AXES_COOLOFF_TIME + timedelta(days=1)
    changes = access_tables_clean(now=later)
    assert changes["login_attempts_deleted"] == changes["rate_counters_deleted"] == 1
    assert AccessAttempt.objects.count() == RateCounter.objects.count() == 0


def test_the_cleanups_are_on_celery_beats_schedule_too():
    tasks = {entry["task"] for entry in celery_app.conf.beat_schedule.values()}
    assert {
        "apps.access.tasks.access_cleanup_task",
        "apps.oauth.tasks.oauth_cleartokens_task",
    } <= tasks
