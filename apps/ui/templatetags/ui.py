"""Template filters of the UI: safe markdown, and small formatting helpers."""

from __future__ import annotations

from html import unescape

from django import template
from django.utils.dateparse import parse_datetime
from django.utils.html import strip_tags
from django.utils.safestring import mark_safe

from apps.memories import provenance
from apps.memories.models import Memory
from apps.memories.titles import shown_title
from apps.memories.updates import why_in_words
from apps.ui import markdown

register = template.Library()


@register.filter
def as_markdown(text: str) -> str:
    return mark_safe(markdown.render(text))  # noqa: S308 - sanitised by nh3 in render()


@register.filter
def plain(text: str, length: int = 600) -> str:
    """The words of a markdown text's start as one line (previews in lists): rendered like
    everywhere else, then the marks dropped, so "**Redis**" reads "Redis", not asterisks."""
    html = markdown.render((text or "")[:length])
    return " ".join(unescape(strip_tags(html)).split())


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


@register.filter
def memory_title(memory) -> str:
    """A memory's name on every page: a Memory, a search payload / values() dict, or a
    trash entry."""
    if isinstance(memory, Memory):
        return memory.display_title
    if isinstance(memory, dict):
        metadata = memory.get("metadata")
        speaker = metadata.get("speaker") if isinstance(metadata, dict) else ""
        return shown_title(
            memory.get("title") or "",
            memory.get("content") or memory.get("snippet") or "",
            speaker if isinstance(speaker, str) else "",
        )
    if hasattr(memory, "content"):  # a trash entry keeps the deleted memory's text
        return shown_title(getattr(memory, "title", "") or "", memory.content or "")
    return str(memory or "")


@register.filter
def constitutional_side(first, second):
    """Which of a pair is a constitutional memory (the side a queue action may only replace
    with an explicit confirmation), or None."""
    return next((m for m in (first, second) if m.tier == "constitutional"), None)


@register.filter
def in_words(why: str, newer=None) -> str:
    """Why a new memory looks like an update of an older one, as a sentence (names spelled
    as the newer memory spells them)."""
    return why_in_words(why or "", getattr(newer, "content", "") or "")


@register.filter
def provenance_of(memory) -> dict | None:
    """A memory's provenance object (as REST and MCP show it), or a search hit's own."""
    if isinstance(memory, dict):
        return memory.get("provenance")
    return provenance.of_memory(memory)


@register.filter
def provenance_line(found) -> str:
    """One line: "written by ana via the web UI on 2026-11-20"."""
    return provenance.sentence(found)
