"""What a page calls a memory: its title, else its first words (a dialog turn: "Speaker: first
words…")."""

from __future__ import annotations

import re

# A memory without a title is named by its first words; a dialog turn by its speaker too.
TITLE_WORDS = 8
TITLE_CHARS = 80
_SPEAKER = re.compile(r"^([A-Z][\w .'-]{0,40}):\s")
_MARKUP = re.compile(r"[*_`#>\[\]]+")


def shown_title(title: str, content: str, speaker: str = "") -> str:
    """What a page calls a memory: its title, else "Speaker: first words…" for a dialog turn
    (the speaker from the content's "Name: " lead or from its metadata), else its first words.
    Markdown marks are dropped, so a heading or bold lead reads as plain words."""
    if title and title.strip():
        return title.strip()
    words = _MARKUP.sub(" ", content or "").split()
    text = " ".join(words)
    lead = _SPEAKER.match(text)
    if lead:
        speaker, words = lead.group(1), text[lead.end() :].split()
    shown = " ".join(words[:TITLE_WORDS])
    if len(words) > TITLE_WORDS or len(shown) > TITLE_CHARS:
        shown = shown[:TITLE_CHARS].rstrip(" ,;:.") + "…"
    if not shown:
        return "(empty)"
    return f"{speaker}: {shown}" if speaker else shown
