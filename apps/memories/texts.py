"""What the write path derives from a memory's text: the string that gets embedded and the
hash that finds exact duplicates. Shared by the services and the re-embedding job, so a
re-embedded memory matches a freshly written one. Also the natural order of external ids,
which orders the turns of a dialog session for the write path and for search alike."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

_DIGITS = re.compile(r"(\d+)")


def content_hash(content: str) -> str:
    return hashlib.sha256(content.strip().encode()).hexdigest()


def embedding_text(title: str, content: str) -> str:
    return f"{title}\n{content}" if title and title not in content else content


@lru_cache(maxsize=65536)  # external ids repeat from search to search; the split is not free
@lru_cache(maxsize=65_536)
def natural_key(text: str | None) -> tuple:
    """ "D1:9" before "D1:10": digits compare as numbers. Cached: the search's neighbour
    chains sort the same dialog ids on every search."""
    parts = _DIGITS.split(text or "")
    return tuple(int(p) if p.isdigit() else p for p in parts)


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
