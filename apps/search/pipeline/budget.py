"""Stage 12: assistant-facing markdown within a token budget, never cutting a memory."""

from __future__ import annotations

import math
from typing import Any

from apps.core.wording import counted
from apps.memories import provenance
from apps.trust.framing import DATA_NOTE, quoted, review_words

from .why import chain_text

GAP_WARNING = (
    "> **Warning: weak evidence.** No result stands out from the rest; the memories below may "
    "not answer the question. Say so rather than rely on them."
)


NOTE_TOKENS = 20


def estimate_tokens(text: str) -> int:
    """About four characters per token for English text (no tokenizer on the hot path)."""
    return max(1, math.ceil(len(text) / 4))


def memory_block(item: dict[str, Any], index: int, contradicted: set[str]) -> str:
    # The heading and the lines under it are ours; every word a writer stored (title, content,
    # the words of what it replaced) is quoted below them (apps/trust/framing.py).
    head = f"### Memory {index}"
    meta = [f"id `{item['id']}`", f"score {item['score']:.3f}", str(item.get("created_at", ""))]
    if item.get("category"):
        meta.append(item["category"])
    if item.get("file_path"):
        path = " ".join(item["file_path"].replace("`", "'").split())  # one line, no code end
        meta.append(f"file `{path}`")
    if item.get("tags"):
        meta.append("tags " + ", ".join(item["tags"]))
    origin = provenance.sentence(item.get("provenance"))
    review = review_words(
        item.get("review", "approved"), item.get("reviewed_by", ""), item.get("risk")
    )
    lines = [head, " · ".join(m for m in meta if m), f"{origin} · {review}"]
    if item["id"] in contradicted:
        lines.append("**Contradiction:** conflicts with another result below or above.")
    if item.get("superseded_by") and not item.get("current", True):
        lines.append(
            f"**Superseded** (valid until {_day(item.get('valid_until'))}) by "
            f"`{item['superseded_by']}`: no longer current."
        )
    for older in item.get("supersedes") or ():
        was = older.get("title") or older.get("content", "")[:120]
        lines.append(
            f"**Replaces** `{older['id']}` (valid {_day(older.get('valid_from'))} to "
            f"{_day(older.get('valid_until'))}), which said:"
        )
        lines.append(quoted(was))
    changed = item.get("basis_changed")
    if changed:
        lines.append(
            f"**Re-check:** its basis changed on {_day(changed.get('on'))} "
            f"(`{changed['basis']}` was {changed['reason']})."
        )
    lines.append("")
    title = (item.get("title") or "").strip()
    lines.append(quoted(f"{title}\n\n{item['content']}" if title else item["content"]))
    return "\n".join(lines)


def _day(moment: str | None) -> str:
    return (moment or "")[:10] or "open"


def render(payload: dict[str, Any], token_budget: int | None) -> str:
    """payload: SearchResponse.to_dict(). Blocks are added whole until the budget is spent."""
    flags = payload.get("flags", {})
    contradicted = {x for pair in flags.get("contradictions", []) for x in pair}
    parts = []
    if flags.get("evidence_gap"):
        parts.append(GAP_WARNING)
    if flags.get("contradictions"):
        listed = "; ".join(f"`{a}` vs `{b}`" for a, b in flags["contradictions"])
        parts.append(f"> **Contradictions among the results:** {listed}")
    if payload.get("path"):
        # The titles are the memories' own words: quoted, as every memory text is.
        chain = quoted(chain_text(payload["path"]))
        parts.append(f"**Causal chain,** in the memories' titles:\n{chain}")
    memories = payload.get("memories", [])
    parts.append(
        f"Found {counted(len(memories), 'memory,memories')} for: {payload.get('query', '')}"
    )
    if memories:
        parts.append(DATA_NOTE)
    used = estimate_tokens("\n\n".join(parts))
    omitted = 0
    for index, item in enumerate(memories, start=1):
        block = memory_block(item, index, contradicted)
        cost = estimate_tokens(block) + 1
        last = index == len(memories)
        reserve = 0 if last else NOTE_TOKENS  # room for the "left out" note
        if token_budget is not None and used + cost + reserve > token_budget:
            omitted = len(memories) - index + 1
            break
        parts.append(block)
        used += cost
    if omitted:
        left_out = counted(omitted, "more result,more results")
        parts.append(f"_({left_out} left out to stay within {token_budget} tokens.)_")
    return "\n\n".join(parts)
