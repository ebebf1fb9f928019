"""The risk check's findings as a person reads them: the flagged spans marked in the text and
the characters nobody can see written out."""

from __future__ import annotations

from django import template
from django.utils.html import escape, format_html_join
from django.utils.safestring import SafeString, mark_safe

from apps.trust.hidden import show_hidden

register = template.Library()


@register.filter
def risk_marked(memory) -> SafeString:
    """The memory's text with each finding in a <mark> naming its reason. Findings hold
    positions in the stored text, so the text is cut at them first and each piece is then made
    visible (hidden characters as [U+200B]) and escaped."""
    text, findings = memory.content or "", _spans(getattr(memory, "risk", None))
    pieces, at = [], 0
    for start, end, reason in findings:
        if start < at:  # overlapping findings: the first one marks the run
            start = at
        if start >= end:
            continue
        pieces.append(escape(show_hidden(text[at:start])))
        pieces.append(
            format_html_join(
                "",
                '<mark class="risk" title="{}">{}</mark>',
                [(reason, show_hidden(text[start:end]))],
            )
        )
        at = end
    pieces.append(escape(show_hidden(text[at:])))
    return mark_safe("".join(str(p) for p in pieces))  # noqa: S308 - every piece escaped above


def _spans(risk) -> list[tuple[int, int, str]]:
    spans = []
    for found in risk if isinstance(risk, list) else []:
        try:
            start, end = int(found["start"]), int(found["end"])
        except (KeyError, TypeError, ValueError):
            continue
        spans.append((max(start, 0), end, str(found.get("reason", ""))))
    return sorted(spans)
