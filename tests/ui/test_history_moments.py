"""The history shows recorded instants as a person reads them, in the server's time zone."""

from __future__ import annotations

import pytest

from apps.ui.views.history import moment_shown


@pytest.mark.parametrize(
    "recorded, shown",
    [
        ("2026-11-28T20:03:02.045434+00:00", "28 Nov 2026, 20:03"),
        ("2026-11-28T20:03:02.045434+02:00", "28 Nov 2026, 18:03"),
        ("2026-11-28T20:03:02", "28 Nov 2026, 20:03"),  # no zone: UTC, as recorded
        ("2026-13-40T20:03:02", "2026-13-40T20:03:02"),  # no real instant: as recorded
        ("next Tuesday", "next Tuesday"),
    ],
)
def test_instants_read_as_dates(settings, recorded, shown):
    settings.TIME_ZONE = "UTC"
    assert moment_shown(recorded) == shown


def test_instants_follow_the_servers_time_zone(settings):
    settings.TIME_ZONE = "Europe/Berlin"
    assert moment_shown("2026-11-28T20:03:02+00:00") == "28 Nov 2026, 21:03"
