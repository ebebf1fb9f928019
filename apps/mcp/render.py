"""Shape service results for the model: short markdown plus JSON-safe structured content."""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from mcp_types import CallToolResult, TextContent

from apps.core.wording import counted
from apps.memories import provenance
from apps.memories.models import CausalEdge, Memory
from apps.memories.recheck import mark_dict
from apps.search.response import chain_text
from apps.trust.framing import DATA_NOTE, quoted, review_words
from apps.trust.hidden import strip_hidden

NO_CHAIN = "No causal link found"


def json_safe(value: Any) -> Any:
    """UUIDs, datetimes and decimals as JSON strings, the way the REST API writes them."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def tool_result(text: str, structured: dict[str, Any]) -> CallToolResult:
    """Every tool's answer; no hidden character (apps/trust/hidden.py) reaches the assistant,
    in the text or in the structured content."""
    return CallToolResult(
        content=[TextContent(type="text", text=strip_hidden(text))],
        structured_content=_without_hidden(json_safe(structured)),
    )


def _without_hidden(value: Any) -> Any:
    if isinstance(value, str):
        return strip_hidden(value)
    if isinstance(value, dict):
        return {strip_hidden(k): _without_hidden(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_hidden(v) for v in value]
    return value


def trust_fields(memory: Memory) -> dict[str, Any]:
    """provenance, review and risk, as every result carries them. The review state and risk
    findings are read where the memory has them; otherwise a memory took effect when written
    and nothing was flagged."""
    return {
        "provenance": provenance.of_memory(memory),
        "review": getattr(memory, "review", None) or "approved",
        "risk": list(getattr(memory, "risk", None) or []),
        "reviewed_by": getattr(memory, "reviewed_by", "") or "",
    }


def memory_to_dict(memory: Memory, *, with_edges: bool = False) -> dict[str, Any]:
    data = {
        "id": str(memory.id),
        "namespace": memory.namespace.name,
        "title": memory.title,
        "content": memory.content,
        "category": memory.category,
        "tags": sorted(tag.name for tag in memory.tags.all()),
        "file_path": memory.file_path,
        "source": memory.source,
        "trigger_phrases": list(memory.trigger_phrases),
        "tier": memory.tier,
        "importance": memory.importance,
        "archived": memory.archived,
        "metadata": memory.metadata,
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "version": memory.version,
        "needs_recheck": [mark_dict(m) for m in memory.recheck_marks.all()],
        **trust_fields(memory),
    }
    if with_edges:
        data["edges"] = [edge_to_dict(e) for e in _edges_of(memory)]
    return data


def _edges_of(memory: Memory) -> list[CausalEdge]:
    return list(CausalEdge.objects.touching([memory.pk]).order_by("created_at"))


def edge_to_dict(edge: CausalEdge) -> dict[str, Any]:
    return {
        "id": edge.pk,
        "source": str(edge.source_id),
        "target": str(edge.target_id),
        "relation": edge.relation,
        "strength": edge.strength,
        "created_at": edge.created_at,
    }


def memory_markdown(memory: Memory, *, heading: str = "") -> str:
    """One memory for the assistant: our lines first (id, fields, who wrote it and its review
    state), then everything its writers stored, title included, as a quotation."""
    tags = ", ".join(sorted(tag.name for tag in memory.tags.all())) or "none"
    trust = trust_fields(memory)
    lines = [heading] if heading else []
    lines.append(f"**Memory** `{memory.id}`")
    lines.append(
        f"{provenance.sentence(trust['provenance'])} · "
        + review_words(trust["review"], getattr(memory, "reviewed_by", "") or "", trust["risk"])
    )
    lines.append(
        f"category: {memory.category} · tier: {memory.tier} · tags: {tags}"
        + (f" · file: {memory.file_path}" if memory.file_path else "")
        + (" · archived" if memory.archived else "")
    )
    lines.append(f"created: {memory.created_at:%Y-%m-%d %H:%M} UTC · version {memory.version}")
    for mark in memory.recheck_marks.all():
        lines.append(
            f"**Re-check:** its basis changed on {mark.marked_at:%Y-%m-%d} "
            f"(`{mark.basis_id}` was {mark.reason})."
        )
    lines.append(DATA_NOTE)
    lines.append("")
    title = memory.title.strip()
    lines.append(quoted(f"{title}\n\n{memory.content}" if title else memory.content))
    return "\n".join(lines)


def write_result_markdown(result) -> str:
    """One line per stored memory, then what the write path noticed (duplicates, tags)."""
    memory = result.memory
    if result.duplicate_of is not None and not result.created:
        text = f"Already stored: identical content exists as `{result.duplicate_of.id}`."
    else:
        text = f"Stored memory `{memory.id}` in '{memory.namespace.name}' ({memory.category})."
    if result.chunks:
        text += f" Split into {counted(len(result.chunks), 'linked chunk')}."
    if result.inferred_tags:
        text += f" Inferred tags: {', '.join(result.inferred_tags)}."
    if result.near_duplicates:
        near = ", ".join(f"`{d['id']}` ({d['similarity']:.2f})" for d in result.near_duplicates)
        text += f" Near-duplicates: {near} — consider update_memory or link_memories (supersedes)."
    if result.superseded:
        ended = ", ".join(f"`{i}`" for i in result.superseded)
        text += f" Supersedes {ended}: their validity ends where this one begins."
    if result.caused_by:
        text += f" Caused by {', '.join(f'`{i}`' for i in result.caused_by)}."
    if result.depends_on:
        listed = ", ".join(f"`{i}`" for i in result.depends_on)
        text += f" Depends on {listed}: re-checked when one of them changes."
    if result.possible_updates:
        listed = "; ".join(
            f'`{u["id"]}` "{u["title"]}" ({u["why"]})' for u in result.possible_updates
        )
        ids = ", ".join(f'"{u["id"]}"' for u in result.possible_updates)
        text += (
            f" Possible update of: {listed}. If this replaces that fact, ask the user or "
            f"confirm by storing it again with supersedes=[{ids}] (or link_memories with "
            "relation supersedes); otherwise nothing to do, a person can decide in the "
            "conflicts queue."
        )
    if result.possible_contradictions:
        listed = "; ".join(
            f'`{u["id"]}` "{u["title"]}" ({u["why"]})' for u in result.possible_contradictions
        )
        text += (
            f" Says the opposite of: {listed}. Neither replaces the other: a person decides "
            "which holds in the conflicts queue; tell the user about the contradiction."
        )
    if result.redacted:
        text += f" Credentials replaced before storing: {', '.join(result.redacted)}."
    if result.pending:
        text += (
            " It is stored, but waits for review by an editor because: "
            f"{memory.review_reason}. Until approved, no search or get finds it."
        )
    return text


def chain_markdown(path: list[dict], *, asked: str, direction: str) -> str:
    """memory_why's text: the chain on one line, then each memory with its id; or a plain
    statement that no link exists (never a guessed reason)."""
    if not path:
        what = "caused" if direction == "effect" else "explains"
        return (
            f"{NO_CHAIN}: no stored memory {what} it through a causal link. Asked about:\n"
            + quoted(asked)
        )
    # The titles are the memories' own words: quoted, as every memory text is.
    lines = [f"**Causal chain ({direction}),** in the memories' titles:", quoted(chain_text(path))]
    lines.append("")
    for index, step in enumerate(path, start=1):
        link = f" ({step['reads']} the one above)" if step.get("reads") else ""
        lines.append(f"{index}. `{step['id']}`{link}")
        lines.append(quoted(step["title"]))
    return "\n".join(lines)
