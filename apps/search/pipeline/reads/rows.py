"""Row reads by id for candidates already found: the row fetch that completes every
candidate's evidence, the scope check for hits reached by walking edges, the head's
embeddings, and browsing (no query text)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from apps.search.types import CandidateRow, Ranked, adopted
from apps.vectors import nearest

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from .. import timeexpr
from ..scope import ASKS, MEMORY, TAG_NAMES, Scope, uuid_array
from . import namespace_vectors
from .lexical import LexicalPlan
from .semantic import COSINE, SENTENCE_COSINE

# The row fetch's first columns (then the tag names, the keyword score, the cosine, ASKS and
# more cosines; a namespace kept in the process has them all read from there).
KEPT_COLUMNS = (
    "m.id::text, m.created_at, m.external_id, m.file_path, m.tier, m.importance, m.stability, "
    "m.pagerank_score"
)
ROW_COLUMNS = f"{KEPT_COLUMNS}, {TAG_NAMES}"
BY_ID = "m.id = ANY(%s::uuid[])"
# A score column left to the kept vectors, or without a query: a float (a bare 0.0 is
# numeric, which arrives as a Decimal, slower to read and convert).
NO_SCORE = "0.0::float8"


def fetch_rows(
    ids: list[str],
    plan: LexicalPlan | None,
    vector: np.ndarray | None = None,
    cosines: Mapping[str, np.ndarray] | None = None,
    passages: str | None = None,
    scope: Scope | None = None,
) -> dict[str, CandidateRow]:
    """Everything the re-rankers need for each candidate, plus its lexical score and its
    cosine similarity to the query, both computed in the database (so memories found by one
    strategy still carry the other's evidence, without shipping embeddings around).
    `cosines` names more vectors (the feedback vector, the query's own when the semantic
    strategies match a focused one); each row carries its cosine to each under that name.
    `passages` (PASSAGE_COSINE or SENTENCE_COSINE, as for semantic_search): each row also
    carries "passage", the best cosine of those passages to `vector` (0 for a memory without
    passages). With the search's `scope`, the cosines come from the namespace's vectors kept
    in the process when it keeps them (namespace_vectors.cosines): the same values, without
    PostgreSQL comparing a few hundred memory and passage vectors per fetch; so do the other
    columns and the keyword score (namespace_vectors.facts): no statement at all."""
    if not ids:
        return {}
    named = cosines or {}
    kept = _kept_cosines(scope, ids, vector, named, passages)
    # The same kept rows (checked once a search): both are there or neither.
    facts = (
        namespace_vectors.facts(scope, ids, plan)
        if scope is not None and kept is not None
        else None
    )
    if kept is not None and facts is not None:
        names = [name for name in kept if name != "similarity"]
        return {memory_id: _kept_row(at, names, kept, facts) for at, memory_id in enumerate(ids)}
    score, score_params = plan.score_sql() if plan else (NO_SCORE, [])
    sim, sim_params = (NO_SCORE, [])
    if vector is not None:
        sim, sim_params = COSINE, [nearest.vector_literal(vector)]
    names = list(named)
    extra = "".join(f", {COSINE}" for _ in names)
    extra_params = [nearest.vector_literal(named[name]) for name in names]
    if passages and vector is not None:
        names.append("passage")
        extra += f", {passages}"
        extra_params.append(sim_params[0])
    sql = f"SELECT {ROW_COLUMNS}, {score}, {sim}, {ASKS}{extra} FROM {MEMORY} m WHERE {BY_ID}"
    with connection.cursor() as cursor:
        cursor.execute(sql, score_params + sim_params + extra_params + [uuid_array(ids)])
        rows = cursor.fetchall()
    return {r[0]: _candidate_row(r, names) for r in rows}


def _kept_cosines(
    scope: Scope | None,
    ids: list[str],
    vector: np.ndarray | None,
    named: Mapping[str, np.ndarray],
    passages: str | None,
) -> dict[str, list[float]] | None:
    """The fetch's cosines from the kept vectors ("similarity" to `vector`, then `named`'s,
    then "passage"), or None: SQL computes them."""
    if scope is None or vector is None:
        return None
    return namespace_vectors.cosines(
        scope,
        ids,
        {"similarity": vector, **named},
        vector if passages else None,
        sentence_only=passages == SENTENCE_COSINE,
    )


def _candidate_row(r: tuple[Any, ...], names: list[str]) -> CandidateRow:
    """A fetched row as a CandidateRow: its cosines are the row's last columns, by `names`."""
    return _row(
        r[1:8],
        tags=tuple(r[8]),
        lexical=r[9],
        # A stored zero vector (written by SQL or another tool) has a NaN cosine.
        similarity=_finite(r[10]),
        asks=bool(r[11]),
        cosines={name: _finite(value) for name, value in zip(names, r[12:], strict=True)},
    )


def _kept_row(
    at: int, names: list[str], kept: Mapping[str, list[float]], facts: namespace_vectors.Facts
) -> CandidateRow:
    """The kept values of the memory at `at`, its place in the ids asked for (finite: a zero
    vector is kept as zeros)."""
    return _row(
        facts.columns[at],
        tags=facts.tags[at],
        lexical=facts.lexical[at],
        similarity=kept["similarity"][at],
        asks=facts.asks[at],
        cosines={name: kept[name][at] for name in names},
    )


def _row(
    r: Sequence[Any],
    *,
    tags: tuple[str, ...],
    lexical: Any,
    similarity: float,
    asks: bool,
    cosines: dict[str, float],
) -> CandidateRow:
    """A CandidateRow from the row fetch's columns (KEPT_COLUMNS after the id)."""
    created_at, external_id, file_path, tier, importance, stability, pagerank = r[:7]
    state = {
        "created_at": created_at,
        "external_id": external_id,
        "file_path": file_path,
        "tier": tier,
        "importance": importance,
        "stability": stability,
        "pagerank": pagerank,
        "tags": tags,
        "lexical": _finite(lexical),
        "similarity": similarity,
        "asks": asks,  # the text ends with a question mark
        "cosines": cosines,
    }
    return adopted(CandidateRow, state)


def _finite(value: float | None) -> float:
    number = float(value or 0.0)
    return number if math.isfinite(number) else 0.0


def mention_times(ids: list[str]) -> set[str]:
    """Which of these memories mention a time in their text (timeexpr.MENTIONS_TIME)."""
    if not ids:
        return set()
    sql = f"SELECT m.id::text, m.content FROM {MEMORY} m WHERE m.id = ANY(%s::uuid[])"
    with connection.cursor() as cursor:
        cursor.execute(sql, [uuid_array(ids)])
        return {
            i for i, content in cursor.fetchall() if timeexpr.MENTIONS_TIME.search(content.lower())
        }


def fetch_embeddings(ids: list[str], scope: Scope | None = None) -> dict[str, np.ndarray]:
    """Unit vectors of a few memories (MMR and contradiction checks on the final top). With
    the search's `scope`, those the process keeps (namespace_vectors) are read from there."""
    if not ids:
        return {}
    kept = namespace_vectors.embeddings(scope, ids) if scope is not None else None
    if kept is not None:
        missing = [i for i in ids if i not in kept]
        return {**kept, **fetch_embeddings(missing)} if missing else kept
    # pgvector's binary form (vector_send: dimension, unused, big-endian float4s) is read
    # straight into numpy: the same float32 values as parsing the text form, without the
    # JSON parse of ~400 numbers per memory that cost a search several milliseconds of CPU.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id::text, vector_send(embedding) FROM {MEMORY} WHERE id = ANY(%s::uuid[]) "
            "AND embedding IS NOT NULL",
            [uuid_array(ids)],
        )
        rows = cursor.fetchall()
    return {i: nearest.vector_from_binary(data) for i, data in rows}


def with_embeddings(items: list[Ranked], count: int, scope: Scope | None = None) -> list[Ranked]:
    """The first `count` items carry their unit vectors (for MMR and the contradiction check)."""
    head = items[:count]
    vectors = fetch_embeddings([r.id for r in head], scope)
    return [r.copy(embedding=vectors.get(r.id)) for r in head] + items[count:]


def in_scope(scope: Scope, ids: list[str]) -> set[str]:
    """The subset of `ids` that passes the scope (for graph hits reached by walking edges)."""
    if not ids:
        return set()
    where, params = scope.where()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id::text FROM {MEMORY} m WHERE {where} AND m.id = ANY(%s::uuid[])",
            params + [uuid_array(ids)],
        )
        return {r[0] for r in cursor.fetchall()}


def browse(scope: Scope, limit: int) -> list[Ranked]:
    """No query text: the newest memories passing the filters, all scored 1.0."""
    where, params = scope.where()
    sql = (
        f"SELECT m.id::text, m.created_at, m.file_path, m.tier, "
        f"{TAG_NAMES} FROM {MEMORY} m WHERE {where} "
        "ORDER BY m.created_at DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params + [limit])
        rows = cursor.fetchall()
    return [
        Ranked(id=i, score=1.0, created_at=c, file_path=f, tier=t, tags=tuple(tg))
        for i, c, f, t, tg in rows
    ]
