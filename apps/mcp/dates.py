"""Accept the date forms people and assistants write: ISO dates and ISO date-times."""

from __future__ import annotations

from datetime import datetime, time

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from apps.core.exceptions import ValidationFailed


def parse_when(value: str | datetime | None, field: str) -> datetime | None:
    """An aware datetime, or None for an empty value. A bare date means its midnight (UTC)."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        parsed = value
    else:
        text = str(value).strip()
        try:
            parsed = parse_datetime(text)
            if parsed is None:
                day = parse_date(text)
                parsed = datetime.combine(day, time.min) if day else None
        except ValueError:
            parsed = None
        if parsed is None:
            raise ValidationFailed(
                {field: f"'{value}' is not a date; use ISO 8601, e.g. 2024-03-01T09:30Z."}
            )
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, timezone.get_default_timezone())
    return parsed
