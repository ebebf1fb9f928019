"""Stage 3: candidate retrieval in SQL (lexical, semantic, exact) plus the row fetch that
completes every candidate's scores. All queries share the Scope's WHERE clause.

Lexical scoring: Postgres' ts_rank_cd has no inverse document frequency, so on conversational
text common words would dominate. Terms are weighted by a BM25 idf computed over the
namespace (document frequencies counted in the same SQL), with BM25's length normalization
(b = 0.4) and a bonus when a term hits the title (A) or tags / trigger phrases (B), so title
hits beat body hits. Query terms go through the same english parser/stemmer as the stored
tsvector and are OR-ed (websearch AND-semantics would drop most questions).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from django.db import transaction

from apps.memories import nearest
from apps.search.types import Hit, Ranked

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.db_router import read_connection as connection

from . import timeexpr
from .scope import MEMORY, MEMORY_TAGS, PASSAGE, TAG, Scope, uuid_array

K1 = 1.2
B = 0.4
TITLE_BONUS = 0.5
TAG_BONUS = 0.1
SEMANTIC_MIN = 0.3
SEMANTIC_FALLBACK_MIN = 0.17
STATS_TTL_S = 60.0
# A large namespace's count, average length and common terms' counts barely move in a
# minute, and counting them costs in proportion (a second for the 413k namespace's length
# average): their cache lives longer, by size, up to this long.
STATS_TTL_MAX_S = 1800.0
MAX_TIED_ROWS = 5000
# a long query's remaining terms pair up rarest first, this many pairs at most
MAX_PAIRS = 32
KNOWN_TAGS_TTL_S = 60.0

_stats_cache: dict[int, tuple[float, int, float]] = {}
# Document frequency per (namespace, stemmed term), cached for STATS_TTL_S like the counts
# above: counting every query term over the namespace was a third of what a search cost
# PostgreSQL, and a term's count over thousands of memories barely moves in a minute. Only
# terms the namespace holds are cached: a term no memory has is counted again by the next
# search, so a memory written a moment ago is found by a word that is new to its namespace.
_df_cache: dict[tuple[int, str], tuple[float, int]] = {}
DF_CACHE_MAX = 200_000
_known_tags: dict[int, tuple[float, tuple[str, ...]]] = {}
# [expires, table rows, {lexeme: share}] from the table statistics (see _frequent_terms)
_frequent: list = [0.0, 0.0, {}]
DOMINANT_SHARE = 0.5
# below this many memories a namespace's terms are always counted (at most a few thousand
# rows each): its keyword ranking stays exact
ESTIMATED_FROM_ROWS = 20_000


@dataclass(frozen=True)
class LexicalPlan:
    lexemes: tuple[str, ...]
    idf: tuple[float, ...]
    avgdl: float
    # summed idf of every query term, and of the terms no memory of the namespace has (at the
    # largest idf): the confidence estimate reads how much of the query the namespace knows
    query_idf: float = 0.0
    missing_idf: float = 0.0
    # the terms a memory must contain one of to be a candidate (empty: any of `lexemes`)
    match: tuple[str, ...] = ()
    # past the row budget: term pairs a memory may contain both of instead, and a term of
    # which only `sample_rows` memories are scored (when the rarer terms cannot fill the pool)
    pairs: tuple[tuple[str, str], ...] = ()
    sample: str = ""
    sample_rows: int = 0

    def score_sql(self, alias: str = "m") -> tuple[str, list]:
        """BM25 over the query terms, in float arithmetic; a term's title and tag bonuses are
        only looked up in the memories that contain it."""
        if not self.lexemes:
            return "0.0", []
        sv = f"{alias}.search_vector"
        parts, params = [], []
        for lexeme, idf in zip(self.lexemes, self.idf, strict=True):
            q = tsquery_literal(lexeme)
            parts.append(
                f"CASE WHEN {sv} @@ %s::tsquery THEN %s"
                f" + CASE WHEN {sv} @@ %s::tsquery THEN %s ELSE 0.0::float8 END"
                f" + CASE WHEN {sv} @@ %s::tsquery THEN %s ELSE 0.0::float8 END"
                " ELSE 0.0::float8 END"
            )
            params += [q, idf, q + ":A", TITLE_BONUS * idf, q + ":B", TAG_BONUS * idf]
        norm = (
            f"({K1 + 1}::float8 / (1 + {K1}::float8 * ({1 - B}::float8"
            f" + {B}::float8 * length({sv})::float8 / %s)))"
        )
        params.append(max(self.avgdl, 1.0))
        return f"(({' + '.join(parts)}) * {norm})", params

    def any_query(self) -> str:
        """The tsquery of the memories to score (besides the sampled term's); may be empty."""
        budgeted = self.match or self.pairs or self.sample
        singles = [tsquery_literal(x) for x in (self.match if budgeted else self.lexemes)]
        both = [f"({tsquery_literal(a)} & {tsquery_literal(b)})" for a, b in self.pairs]
        return " | ".join(singles + both)


def tsquery_literal(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _namespace_stats(cursor, namespace_id: int) -> tuple[int, float]:
    cached = _stats_cache.get(namespace_id)
    if cached and time.monotonic() < cached[0]:
        return cached[1], cached[2]
    cursor.execute(
        f"SELECT count(*), coalesce(avg(length(search_vector)), 1) FROM {MEMORY} "
        "WHERE namespace_id = %s AND NOT archived",
        [namespace_id],
    )
    count, avgdl = cursor.fetchone()
    _stats_cache[namespace_id] = (time.monotonic() + _ttl(count), int(count), float(avgdl))
    return int(count), float(avgdl)


def _ttl(rows: int) -> float:
    """How long a count over `rows` memories is kept: a minute, longer for large counts."""
    return min(STATS_TTL_S * max(1.0, rows / 5_000), STATS_TTL_MAX_S)


def lexical_plan(
    text: str, namespace_id: int, common_rows: int = 0, row_budget: int = 0, pool: int = 100
) -> LexicalPlan:
    """Stem the query like the stored vectors, then weigh each term by its namespace idf.
    With `common_rows`, a term found in more memories than that is left out of what a
    candidate must match (it still counts in the score); if every term is that common, the
    rarest one is matched. With `row_budget`, the terms to match are taken rarest first while
    their memories fit the budget; a memory with one of the remaining terms is a candidate
    when it has another query term too (`pairs`). A memory with a single such term scores at
    most that term's idf, which is below every taken term's, so the best-scored memories stay
    candidates (up to length normalisation and the title and tag bonuses) while far fewer are
    scored. If the taken terms' memories cannot fill the `pool`, up to the rest of the budget
    of the next term's are scored too (`sample`)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(array_agg(lexeme ORDER BY lexeme), '{}') "
            "FROM unnest(to_tsvector('english', %s))",
            [text],
        )
        lexemes = tuple(cursor.fetchone()[0][:32])
        total, avgdl = _namespace_stats(cursor, namespace_id)
        if not lexemes:
            return LexicalPlan((), (), avgdl)
        dfs = _document_frequencies(cursor, namespace_id, lexemes, common_rows, total)
    idf = tuple(math.log(1 + (max(total - df, 0) + 0.5) / (df + 0.5)) for df in dfs)
    kept = [(lex, w, df) for lex, w, df in zip(lexemes, idf, dfs, strict=True) if df > 0]
    missing = sum(w for w, df in zip(idf, dfs, strict=True) if df == 0)
    match: tuple[str, ...] = ()
    if common_rows and kept and max(df for _, _, df in kept) > common_rows:
        match = tuple(lex for lex, _, df in kept if df <= common_rows)
        match = match or (min(kept, key=lambda k: k[2])[0],)
    pairs: tuple[tuple[str, str], ...] = ()
    sample, sample_rows = "", 0
    if row_budget:
        match, sample, sample_rows, pairs = _within_budget(kept, match, total, row_budget, pool)
    return LexicalPlan(
        tuple(x for x, _, _ in kept),
        tuple(w for _, w, _ in kept),
        avgdl,
        query_idf=sum(idf),
        missing_idf=missing,
        match=match,
        pairs=pairs,
        sample=sample,
        sample_rows=sample_rows,
    )


def _within_budget(
    kept: list[tuple[str, float, int]],
    match: tuple[str, ...],
    total: int,
    row_budget: int,
    pool: int,
) -> tuple[tuple[str, ...], str, int, tuple[tuple[str, str], ...]]:
    """(terms to match, the term sampled, how many of its memories, term pairs to match) for a
    row budget; the plan as it was when the match terms' memories (or the namespace's `total`)
    fit the budget."""
    df = {lex: d for lex, _, d in kept}
    candidates = sorted(match or df, key=lambda x: (df[x], x))
    if min(sum(df[x] for x in candidates), total) <= row_budget:
        return match, "", 0, ()
    taken: list[str] = []
    rows = 0
    for lex in candidates:
        if rows + df[lex] > row_budget:
            break
        taken.append(lex)
        rows += df[lex]
    rest = candidates[len(taken) :]
    # Too few memories to fill the pool: some of the next term's, as many as the budget has
    # left; they all score that one term, so which of them are scored matters little.
    sample = rest[0] if rows < pool else ""
    pairs = [(a, b) for i, a in enumerate(rest) for b in rest[i + 1 :]]
    return tuple(taken), sample, max(pool, row_budget - rows), tuple(pairs[:MAX_PAIRS])


def _document_frequencies(
    cursor, namespace_id: int, lexemes: tuple[str, ...], cap: int = 0, namespace_rows: int = 0
) -> list[int]:
    """Memories of the namespace holding each term. With `cap`, counting stops past cap
    memories (what decides that a term is common) and the planner's estimate stands for the
    rest; and in a namespace of ESTIMATED_FROM_ROWS or more that holds most of the table, a
    term the table statistics list as frequent takes its count from them (`namespace_rows` x
    its share) without reading a row. Counting "use" in the 37k of a 413k namespace's
    memories that hold it took longer than the rest of the search; "tree" in 4.5k, a third
    of it."""
    now = time.monotonic()
    known: dict[str, int] = {}
    for lexeme in lexemes:
        cached = _df_cache.get((namespace_id, lexeme))
        if cached and now < cached[0]:
            known[lexeme] = cached[1]
    todo = [x for x in lexemes if x not in known]
    if len(_df_cache) > DF_CACHE_MAX:
        _df_cache.clear()
    if todo and cap and namespace_rows >= ESTIMATED_FROM_ROWS:
        shares = _frequent_terms(cursor, namespace_rows)
        for lexeme in [x for x in todo if x in shares]:
            known[lexeme] = df = max(1, round(shares[lexeme] * namespace_rows))
            _df_cache[(namespace_id, lexeme)] = (now + _ttl(df), df)
        todo = [x for x in todo if x not in known]
    if todo:
        if cap:
            counts = ", ".join(
                f"(SELECT count(*) FROM (SELECT FROM {MEMORY} WHERE namespace_id = %s "
                "AND NOT archived AND search_vector @@ %s::tsquery LIMIT %s) c)"
                for _ in todo
            )
            params = [p for x in todo for p in (namespace_id, tsquery_literal(x), cap + 1)]
            cursor.execute(f"SELECT {counts}", params)
        else:
            counts = ", ".join("count(*) FILTER (WHERE search_vector @@ %s::tsquery)" for _ in todo)
            cursor.execute(
                f"SELECT {counts} FROM {MEMORY} WHERE namespace_id = %s AND NOT archived "
                "AND search_vector @@ %s::tsquery",
                [tsquery_literal(x) for x in todo]
                + [namespace_id, " | ".join(tsquery_literal(x) for x in todo)],
            )
        found = cursor.fetchone()
        for lexeme, df in zip(todo, found, strict=True):
            if cap and df > cap:
                df = max(df, _estimated_rows(cursor, namespace_id, lexeme))
            known[lexeme] = df
            if df > 0:
                _df_cache[(namespace_id, lexeme)] = (now + _ttl(df), df)
    return [known[x] for x in lexemes]


def _frequent_terms(cursor, namespace_rows: int) -> dict[str, float]:
    """{lexeme: share of the memories holding it} for the terms ANALYZE found frequent in the
    search vectors (pg_stats' most common elements, about 1,000 at the default statistics
    target), when a namespace of `namespace_rows` holds at least DOMINANT_SHARE of the table;
    else {} (the table's shares need not be this namespace's)."""
    now = time.monotonic()
    if _frequent[0] <= now:
        cursor.execute(
            "SELECT c.reltuples, s.most_common_elems::text::text[], s.most_common_elem_freqs "
            "FROM pg_class c LEFT JOIN pg_stats s ON s.schemaname = current_schema() "
            "AND s.tablename = c.relname AND s.attname = 'search_vector' "
            "WHERE c.oid = %s::regclass",
            [MEMORY],
        )
        row = cursor.fetchone()
        table_rows, elems, freqs = row if row else (0, None, None)
        shares = dict(zip(elems or (), freqs or (), strict=False))
        _frequent[:] = [now + STATS_TTL_S, max(float(table_rows or 0), 0.0), shares]
    table_rows, shares = _frequent[1], _frequent[2]
    if not shares or namespace_rows < DOMINANT_SHARE * table_rows:
        return {}
    return shares


def _estimated_rows(cursor, namespace_id: int, lexeme: str) -> int:
    """The planner's row estimate for the namespace's memories holding `lexeme` (from the
    lexeme frequencies ANALYZE keeps for the search vector; no row is read)."""
    cursor.execute(
        f"EXPLAIN (FORMAT JSON) SELECT FROM {MEMORY} WHERE namespace_id = %s "
        "AND NOT archived AND search_vector @@ %s::tsquery",
        [namespace_id, tsquery_literal(lexeme)],
    )
    plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return int(plan[0]["Plan"]["Plan Rows"])


def lexical_search(scope: Scope, plan: LexicalPlan, limit: int) -> list[Hit]:
    if not plan.lexemes:
        return []
    where, params = scope.where()
    score, score_params = plan.score_sql()
    matched = plan.any_query()
    if not plan.sample:
        sql = (
            f"SELECT m.id::text, {score} AS s FROM {MEMORY} m WHERE {where} "
            "AND m.search_vector @@ %s::tsquery ORDER BY s DESC, m.created_at DESC LIMIT %s"
        )
        args = score_params + params + [matched, limit]
    else:
        branch = f"SELECT m.id::text, {score} AS s, m.created_at FROM {MEMORY} m WHERE {where} "
        sampled = branch + "AND m.search_vector @@ %s::tsquery"
        args = score_params + params + [tsquery_literal(plan.sample)]
        if matched:
            sampled += " AND NOT m.search_vector @@ %s::tsquery"
            args.append(matched)
        sql = f"({sampled} LIMIT %s)"
        args.append(plan.sample_rows)
        if matched:
            sql = f"({branch}AND m.search_vector @@ %s::tsquery) UNION ALL {sql}"
            args = score_params + params + [matched] + args
        sql = f"SELECT * FROM ({sql}) c ORDER BY 2 DESC, 3 DESC LIMIT %s"
        args.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, args)
        return [Hit(r[0], float(r[1])) for r in cursor.fetchall() if r[1] > 0]


# hnsw.ef_search by namespace size, chosen by measuring recall@10 against an exact scan on the
# scale set (docs/benchmarks.md, "Scale"): recall at a fixed ef_search falls as the graph grows.
EF_SEARCH_BY_SIZE = ((20_000, 100), (100_000, 200), (250_000, 300))
EF_SEARCH_LARGEST = 400


def ef_search_for(size: int, limit: int, setting: int = 0) -> int:
    """The HNSW candidate list for a namespace of `size` memories: the setting when given,
    else the measured table; never below the number of rows asked for."""
    if setting:
        return max(limit, min(setting, 1000))
    chosen = next((ef for top, ef in EF_SEARCH_BY_SIZE if size <= top), EF_SEARCH_LARGEST)
    return max(limit, chosen)


def namespace_size(namespace_id: int) -> int:
    """Live memories in the namespace (cached for a minute, as the lexical statistics)."""
    with connection.cursor() as cursor:
        return _namespace_stats(cursor, namespace_id)[0]


def semantic_search(
    scope: Scope,
    vector: np.ndarray,
    limit: int,
    min_similarity: float = SEMANTIC_MIN,
    *,
    exact_max: int = 10_000,
    ef_search: int = 0,
    passages: str | None = None,
) -> tuple[list[Hit], bool]:
    """Nearest memories by cosine. A namespace of at most `exact_max` memories is scanned
    exactly (cheaper than walking a graph built over every namespace, and never misses);
    a larger one goes through the HNSW index with iterative scan, which keeps filtered
    queries full (apps/memories/nearest.py; the size is the live count the keyword
    statistics keep, so this costs no probe of its own). When a filter lets so few memories
    through that the index scan gives up short of `limit`, those few are scanned exactly, so
    a page is never short while matches exist. Returns hits at or above `min_similarity`;
    when none reach it, the rows at or above the fallback threshold, and reports that it fell
    back. `passages` (PASSAGE_COSINE or SENTENCE_COSINE): the exact scan ranks a memory by
    the higher of its own cosine and its best passage's, the evidence the row fetch scores
    it by, so a memory whose one sentence answers is found as well as rescored. The HNSW walk
    indexes memory vectors only: in a larger namespace passages rescore what it finds."""
    literal = nearest.vector_literal(vector)
    size = namespace_size(scope.namespace_id)
    if size <= exact_max:
        rows = exact_nearest(scope, literal, limit, passages)
    else:
        rows = hnsw_nearest(scope, literal, limit, ef_search_for(size, limit, ef_search))
        if len(rows) < limit and scope.filtered:
            rows = exact_nearest(scope, literal, limit, passages)
    rows.sort(key=lambda r: -r[1])
    hits, fallback = apply_similarity_floor(rows, min_similarity)
    return hits, fallback


# The HNSW index is built on the embedding cast to halfvec (migration 0007); similarities are
# computed on the stored float vectors.
HNSW_ORDER = nearest.order_by("m.embedding", "%s::vector", walk_index=True)
COSINE = "coalesce(1 - (m.embedding <=> %s::vector), 0)"
# A memory's best passage (apps/memories/passages.py) by cosine; 0 without passages. The
# previous-turn passage of a dialog turn (apps/memories/dialog.py) counts unless left out.
PASSAGE_COSINE = (
    f"coalesce((SELECT max(1 - (p.embedding <=> %s::vector)) FROM {PASSAGE} p "
    "WHERE p.memory_id = m.id), 0)"
)
SENTENCE_COSINE = PASSAGE_COSINE.replace(
    "p.memory_id = m.id", "p.memory_id = m.id AND p.previous_id IS NULL"
)


def hnsw_nearest(scope: Scope, literal: str, limit: int, ef_search: int) -> list[tuple[str, float]]:
    """Approximate nearest rows in scope through the HNSW index (iterative scan)."""
    where, params = scope.where(probe_tags=True)
    sql = (
        f"SELECT m.id::text, 1 - (m.embedding <=> %s::vector) AS sim FROM {MEMORY} m "
        f"WHERE {where} AND m.embedding IS NOT NULL ORDER BY {HNSW_ORDER} LIMIT %s"
    )
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        nearest.prepare_walk(cursor, ef_search)
        cursor.execute(sql, [literal] + params + [literal, limit])
        return [(i, float(s)) for i, s in cursor.fetchall()]


def exact_nearest(
    scope: Scope, literal: str, limit: int, passages: str | None = None
) -> list[tuple[str, float]]:
    """Exact nearest rows in scope: every row passing the scope is compared (ordering by the
    computed similarity, which no index matches, keeps the planner off the HNSW index).
    `passages`: a passage cosine expression (PASSAGE_COSINE, SENTENCE_COSINE); a row's
    similarity is then the higher of its own and its best passage's."""
    where, params = scope.where()
    sim, sim_params = "1 - (m.embedding <=> %s::vector)", [literal]
    if passages:
        sim, sim_params = f"greatest({sim}, {passages})", [literal, literal]
    sql = (
        f"SELECT m.id::text, {sim} AS sim FROM {MEMORY} m "
        f"WHERE {where} AND m.embedding IS NOT NULL ORDER BY sim DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, sim_params + params + [limit])
        return [(i, float(s)) for i, s in cursor.fetchall()]


def apply_similarity_floor(
    rows: list[tuple[str, float]],
    minimum: float = SEMANTIC_MIN,
    fallback: float = SEMANTIC_FALLBACK_MIN,
) -> tuple[list[Hit], bool]:
    """Keep rows >= minimum; if none, keep rows >= fallback and say a fallback happened."""
    hits = [Hit(i, s) for i, s in rows if s >= minimum]
    if hits or not rows:
        return hits, False
    return [Hit(i, s) for i, s in rows if s >= fallback], True


def exact_search(scope: Scope, phrases: list[str], limit: int) -> list[Hit]:
    """Memories containing one of the phrases verbatim (case-insensitive) in content or title;
    earlier occurrences and more phrases rank higher."""
    phrases = [p for p in phrases if p.strip()]
    if not phrases:
        return []
    where, params = scope.where()
    patterns = [
        "%" + p.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_") + "%" for p in phrases
    ]
    matches = " + ".join("((m.content ILIKE %s) OR (m.title ILIKE %s))::int" for _ in patterns)
    match_params = [x for p in patterns for x in (p, p)]
    sql = (
        f"SELECT m.id::text, ({matches}) AS n, "
        "strpos(lower(m.content), lower(%s)) AS pos FROM "
        f"{MEMORY} m WHERE {where} AND ({matches}) > 0 "
        "ORDER BY n DESC, pos ASC, m.created_at DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, match_params + [phrases[0]] + params + match_params + [limit])
        rows = cursor.fetchall()
    return [Hit(i, float(n) + 1.0 / (1 + max(pos, 0))) for i, n, pos in rows]


def fetch_rows(
    ids: list[str],
    plan: LexicalPlan | None,
    vector: np.ndarray | None = None,
    cosines: Mapping[str, np.ndarray] | None = None,
    passages: str | None = None,
) -> dict[str, dict]:
    """Everything the re-rankers need for each candidate, plus its lexical score and its
    cosine similarity to the query, both computed in the database (so memories found by one
    strategy still carry the other's evidence, without shipping embeddings around).
    `cosines` names more vectors (the feedback vector, the query's own when the semantic
    strategies match a focused one); each row carries its cosine to each under that name.
    `passages` (PASSAGE_COSINE or SENTENCE_COSINE, as for semantic_search): each row also
    carries "passage", the best cosine of those passages to `vector` (0 for a memory without
    passages)."""
    if not ids:
        return {}
    score, score_params = plan.score_sql() if plan else ("0.0", [])
    sim, sim_params = ("0.0", [])
    if vector is not None:
        sim, sim_params = COSINE, [nearest.vector_literal(vector)]
    names = list(cosines or {})
    extra = "".join(f", {COSINE}" for _ in names)
    extra_params = [nearest.vector_literal(cosines[name]) for name in names]
    if passages and vector is not None:
        names.append("passage")
        extra += f", {passages}"
        extra_params.append(sim_params[0])
    sql = (
        "SELECT m.id::text, m.created_at, m.external_id, m.file_path, m.tier, m.importance, "
        "m.stability, m.pagerank_score, "
        f"ARRAY(SELECT t.name FROM {MEMORY_TAGS} mt JOIN {TAG} t ON t.id = mt.tag_id "
        f"WHERE mt.memory_id = m.id), {score}, {sim}, right(rtrim(m.content), 1) = '?'{extra} "
        f"FROM {MEMORY} m WHERE m.id = ANY(%s::uuid[])"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, score_params + sim_params + extra_params + [uuid_array(ids)])
        rows = cursor.fetchall()
    out = {}
    for r in rows:
        out[r[0]] = {
            "created_at": r[1],
            "external_id": r[2],
            "file_path": r[3],
            "tier": r[4],
            "importance": r[5],
            "stability": r[6],
            "pagerank": r[7],
            "tags": tuple(r[8]),
            "lexical": _finite(r[9]),
            # A stored zero vector (written by SQL or another tool) has a NaN cosine.
            "similarity": _finite(r[10]),
            "asks": bool(r[11]),  # the text ends with a question mark
            **{name: _finite(value) for name, value in zip(names, r[12:], strict=True)},
        }
    return out


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


def _finite(value) -> float:
    number = float(value or 0.0)
    return number if math.isfinite(number) else 0.0


def fetch_embeddings(ids: list[str]) -> dict[str, np.ndarray]:
    """Unit vectors of a few memories (MMR and contradiction checks on the final top)."""
    if not ids:
        return {}
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
    return {i: vector_from_binary(data) for i, data in rows}


def vector_from_binary(data: bytes) -> np.ndarray:
    """A pgvector `vector_send` value as a float32 numpy array."""
    return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)


def window_rows(scope: Scope, times: list, gap_seconds: float) -> list[tuple]:
    """(id, created_at, external_id) of the memories in scope that can be temporal neighbours
    of memories created at `times`: every imported memory sharing one of those timestamps (a
    session imported with one date; its external ids give the order), plus the nearest
    earlier and later memory within `gap` of each. Memories written together in one batch
    share a timestamp without any order among them, so they are not each other's neighbours.
    Bounded work at any namespace size: one index range scan per timestamp."""
    sql, args = window_query(scope, times, gap_seconds)
    if not sql:
        return []
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        probe_settings(cursor)
        cursor.execute(sql, args)
        return [(i, c, e) for i, c, e in cursor.fetchall()]


def probe_settings(cursor) -> None:
    """For the current transaction: each neighbour probe walks the (namespace, created_at)
    index, which returns its one row already in order. When the statistics have not seen a
    namespace yet (bulk-imported since the last ANALYZE: 10k memories added to a 100k table
    stay under autovacuum's 10%), the planner expects a single row there, takes the bare
    namespace index and sorts the whole namespace once per probe: 1.4-2 s a search instead of
    ~6 ms (docs/benchmarks.md, issue 10 seventh session). With sorts ruled out, only the
    right index is left."""
    cursor.execute("SET LOCAL enable_sort = off")


def window_query(scope: Scope, times: list, gap_seconds: float) -> tuple[str, list]:
    stamps = sorted(set(times))
    if not stamps:
        return "", []
    where, params = scope.where(probe_tags=True)
    lateral = (
        "SELECT x.id, x.created_at, x.external_id FROM unnest(%s::timestamptz[]) t(ts) "
        "CROSS JOIN LATERAL (SELECT m.id::text, m.created_at, m.external_id "
        f"FROM {MEMORY} m WHERE {where} AND m.created_at {{op}} t.ts "
        "AND m.created_at {bound} ORDER BY m.created_at {order} LIMIT 1) x"
    )
    before = lateral.format(op="<", bound=">= t.ts - make_interval(secs => %s)", order="DESC")
    after = lateral.format(op=">", bound="<= t.ts + make_interval(secs => %s)", order="ASC")
    sql = (
        f"(SELECT m.id::text, m.created_at, m.external_id FROM {MEMORY} m WHERE {where} "
        f"AND m.created_at = ANY(%s::timestamptz[]) AND m.external_id IS NOT NULL "
        f"LIMIT {MAX_TIED_ROWS}) "
        f"UNION ({before}) UNION ({after})"
    )
    args = params + [stamps]
    args += [stamps] + params + [gap_seconds]
    args += [stamps] + params + [gap_seconds]
    return sql, args


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
        f"ARRAY(SELECT t.name FROM {MEMORY_TAGS} mt JOIN {TAG} t ON t.id = mt.tag_id "
        f"WHERE mt.memory_id = m.id) FROM {MEMORY} m WHERE {where} "
        "ORDER BY m.created_at DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params + [limit])
        rows = cursor.fetchall()
    return [
        Ranked(id=i, score=1.0, created_at=c, file_path=f, tier=t, tags=tuple(tg))
        for i, c, f, t, tg in rows
    ]


def with_embeddings(items: list[Ranked], count: int) -> list[Ranked]:
    """The first `count` items carry their unit vectors (for MMR and the contradiction check)."""
    head = items[:count]
    vectors = fetch_embeddings([r.id for r in head])
    return [r.copy(embedding=vectors.get(r.id)) for r in head] + items[count:]


def namespace_tags(namespace_id: int) -> tuple[str, ...]:
    """Tag names in use in the namespace (entity detection), cached for a minute."""
    cached = _known_tags.get(namespace_id)
    if cached and time.monotonic() - cached[0] < KNOWN_TAGS_TTL_S:
        return cached[1]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT t.name FROM {TAG} t JOIN {MEMORY_TAGS} mt ON mt.tag_id = t.id "
            f"JOIN {MEMORY} m ON m.id = mt.memory_id WHERE m.namespace_id = %s",
            [namespace_id],
        )
        names = tuple(sorted(r[0] for r in cursor.fetchall()))
    _known_tags[namespace_id] = (time.monotonic(), names)
    return names
