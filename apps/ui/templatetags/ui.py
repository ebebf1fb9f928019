"""Template filters of the UI: safe markdown, and small formatting helpers."""

from __future__ import annotations

from django import template
from django.utils.dateparse import parse_datetime
from django.utils.safestring import mark_safe

from apps.ui import markdown

register = template.Library()


@register.filter
def as_markdown(text: str) -> str:
    return mark_safe(markdown.render(text))  # noqa: S308 - sanitised by nh3 in render()


@register.filter
def isodate(value):
    """A datetime from the ISO string the search service returns (dates in JSON payloads)."""
    if isinstance(value, str):
        return parse_datetime(value)
    return value


@register.filter
def get(mapping, key):
    if isinstance(mapping, dict):
        return mapping.get(key) if key in mapping else mapping.get(str(key))
    return None


@register.filter
def ms(value) -> str:
    try:
        return f"{float(value):.1f} ms"
    except (TypeError, ValueError):
        return ""
