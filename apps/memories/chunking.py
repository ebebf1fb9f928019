"""Structure-aware chunking of long markdown (SPEC section 3).

Invariants: a fenced code block or a table is never split (an oversized one becomes a chunk of its
own); every chunk that holds a section's content starts with that section's heading, so a heading
never stands apart from its text; chunks stay within `max_chars` wherever the atomic blocks allow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING_RE = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
FENCE_RE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})")
TABLE_ROW_RE = re.compile(r"^\s*\|.*\|\s*$")
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Block:
    kind: str  # "heading" | "code" | "table" | "text"
    text: str
    level: int = 0  # heading level


@dataclass(frozen=True)
class Chunk:
    index: int
    title: str  # heading path, e.g. "Install > Linux"
    text: str


def parse_blocks(markdown: str) -> list[Block]:
    lines = markdown.splitlines()
    blocks: list[Block] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            text = "\n".join(paragraph).strip()
            if text:
                blocks.append(Block("text", text))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE_RE.match(line)
        if fence:
            flush()
            marker = fence.group(2)
            body = [line]
            i += 1
            while i < len(lines):
                body.append(lines[i])
                closing = FENCE_RE.match(lines[i])
                i += 1
                if (
                    closing
                    and closing.group(2)[0] == marker[0]
                    and len(closing.group(2)) >= len(marker)
                ):
                    break
            blocks.append(Block("code", "\n".join(body)))
            continue
        if TABLE_ROW_RE.match(line):
            flush()
            rows = []
            while i < len(lines) and TABLE_ROW_RE.match(lines[i]):
                rows.append(lines[i])
                i += 1
            blocks.append(Block("table", "\n".join(rows)))
            continue
        heading = HEADING_RE.match(line)
        if heading:
            flush()
            blocks.append(Block("heading", line.strip(), level=len(heading.group(1))))
        elif not line.strip():
            flush()
        else:
            paragraph.append(line)
        i += 1
    flush()
    return blocks


def _split_text(text: str, max_chars: int) -> list[str]:
    """Split an over-long prose block at sentence ends (words as a last resort)."""
    pieces: list[str] = []
    current = ""
    for sentence in SENTENCE_END_RE.split(text):
        units = [sentence] if len(sentence) <= max_chars else sentence.split(" ")
        for unit in units:
            candidate = f"{current} {unit}".strip() if current else unit
            if len(candidate) <= max_chars or not current:
                current = candidate
            else:
                pieces.append(current)
                current = unit
    if current:
        pieces.append(current)
    return pieces


@dataclass
class _Section:
    path: list[str]
    heading: str  # the heading line ("" for text before the first heading)
    blocks: list[Block]


def _sections(blocks: list[Block]) -> list[_Section]:
    sections: list[_Section] = []
    path: list[tuple[int, str]] = []
    current = _Section([], "", [])
    for block in blocks:
        if block.kind == "heading":
            if current.heading or current.blocks:
                sections.append(current)
            name = HEADING_RE.match(block.text).group(2)
            path = [(lvl, n) for lvl, n in path if lvl < block.level] + [(block.level, name)]
            current = _Section([n for _, n in path], block.text, [])
        else:
            current.blocks.append(block)
    if current.heading or current.blocks:
        sections.append(current)
    return sections


def _section_pieces(section: _Section, max_chars: int) -> list[str]:
    """A section as one or more texts, each starting with the section heading."""
    head = section.heading
    budget = max(max_chars - len(head) - 2, max_chars // 2)
    units: list[str] = []
    for block in section.blocks:
        if block.kind == "text" and len(block.text) > budget:
            units.extend(_split_text(block.text, budget))
        else:
            units.append(block.text)
    if not units:
        return [head] if head else []
    pieces: list[str] = []
    current: list[str] = []
    for unit in units:
        size = sum(len(u) + 2 for u in current) + len(unit)
        if current and size > budget:
            pieces.append("\n\n".join(current))
            current = []
        current.append(unit)
    pieces.append("\n\n".join(current))
    return ["\n\n".join(filter(None, [head, piece])) for piece in pieces]


def chunk_markdown(markdown: str, max_chars: int) -> list[Chunk]:
    """Chunks of `markdown`; a text within `max_chars` comes back as a single chunk."""
    text = markdown.strip()
    if len(text) <= max_chars:
        return [Chunk(0, "", text)]
    chunks: list[tuple[str, str]] = []
    for section in _sections(parse_blocks(text)):
        title = " > ".join(section.path)
        for piece in _section_pieces(section, max_chars):
            # Merge small neighbouring sections while they fit, keeping the first title.
            if chunks and len(chunks[-1][1]) + len(piece) + 2 <= max_chars:
                prev_title, prev_text = chunks[-1]
                chunks[-1] = (prev_title or title, f"{prev_text}\n\n{piece}")
            else:
                chunks.append((title, piece))
    return [Chunk(i, title, body) for i, (title, body) in enumerate(chunks)]


def chunk_by_heading(markdown: str, max_chars: int) -> list[Chunk]:
    """One chunk per heading section (imports of notes): sections are never merged, an oversized
    one is split like `chunk_markdown` splits it, and a heading with no text of its own (one
    followed straight by a sub-heading) gives no chunk."""
    chunks: list[Chunk] = []
    for section in _sections(parse_blocks(markdown.strip())):
        if not section.blocks:
            continue
        title = " > ".join(section.path)
        for piece in _section_pieces(section, max_chars):
            chunks.append(Chunk(len(chunks), title, piece))
    return chunks
