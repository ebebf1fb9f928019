"""Stage 3, keyword strategy: BM25 over the stored tsvectors.

Postgres' ts_rank_cd has no inverse document frequency, so on conversational text common
words would dominate. Terms are weighted by a BM25 idf computed over the namespace
(reads/stats.py keeps the document frequencies), with BM25's length normalization
(b = 0.4) and a bonus when a term hits the title (A) or tags / trigger phrases (B), so title
hits beat body hits. Query terms go through the same english parser/stemmer as the stored
tsvector and are OR-ed (websearch AND-semantics would drop most questions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from threading import Lock
from typing import Any

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

from apps.search.types import Hit

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from ..scope import MEMORY, Scope, tsquery_literal
from . import namespace_vectors
from .namespace_vectors import Lexicon
from .stats import ESTIMATED_FROM_ROWS, document_frequencies, namespace_stats

K1 = 1.2
B = 0.4
TITLE_BONUS = 0.5
TAG_BONUS = 0.1
MAX_QUERY_TERMS = 32
# a long query's remaining terms pair up rarest first, this many pairs at most
MAX_PAIRS = 32


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

    def score_sql(self, alias: str = "m") -> tuple[str, list[Any]]:
        """BM25 over the query terms, in float arithmetic; a term's title and tag bonuses are
        only looked up in the memories that contain it."""
        if not self.lexemes:
            return "0.0::float8", []  # a float, as the expression below (a bare 0.0 is numeric)
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

    def kept_scores(
        self, lexicon: Lexicon, rows: npt.NDArray[np.intp], lengths: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        """score_sql's value for some memories of a namespace kept in the process
        (reads/namespace_vectors.py): `rows` index its memories, `lengths` their full-text
        vectors' lengths (NaN: none, which scores 0 as SQL's null does). The same float
        operations in the same order as the SQL expression, so the same doubles."""
        if not self.lexemes:
            return np.zeros(len(rows))
        total: npt.NDArray[np.float64] | None = None
        for lexeme, idf in zip(self.lexemes, self.idf, strict=True):
            part = np.zeros(len(rows))
            postings = lexicon.get(lexeme)
            if postings is not None:  # a term the lexicon holds has at least one memory
                at = np.minimum(np.searchsorted(postings.rows, rows), len(postings.rows) - 1)
                hit = postings.rows[at] == rows
                title = np.where(postings.title[at], TITLE_BONUS * idf, 0.0)
                tags = np.where(postings.tags[at], TAG_BONUS * idf, 0.0)
                part = np.where(hit, (idf + title) + tags, 0.0)
            total = part if total is None else total + part
        assert total is not None  # lexemes is not empty
        chosen = lengths[rows]
        norm = (K1 + 1) / (1 + K1 * ((1 - B) + B * chosen / max(self.avgdl, 1.0)))
        scores: npt.NDArray[np.float64] = total * norm
        return np.where(np.isnan(chosen), 0.0, scores)

    def kept_matches(self, lexicon: Lexicon) -> npt.NDArray[np.intp] | None:
        """The kept rows any_query() matches, ascending; None with a sampled term (SQL takes
        some of its memories, in no order)."""
        if self.sample:
            return None
        singles = self.match if (self.match or self.pairs) else self.lexemes
        found = {x: lexicon.get(x) for x in {*singles, *(x for pair in self.pairs for x in pair)}}
        parts = [p.rows for p in (found[x] for x in singles) if p is not None]
        for a, b in self.pairs:
            first, second = found[a], found[b]
            if first is not None and second is not None:
                parts.append(np.intersect1d(first.rows, second.rows))
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.intp)

    def any_query(self) -> str:
        """The tsquery of the memories to score (besides the sampled term's); may be empty."""
        budgeted = self.match or self.pairs or self.sample
        singles = [tsquery_literal(x) for x in (self.match if budgeted else self.lexemes)]
        both = [f"({tsquery_literal(a)} & {tsquery_literal(b)})" for a, b in self.pairs]
        return " | ".join(singles + both)


def lexical_plan(
    text: str,
    namespace_id: int,
    common_rows: int = 0,
    row_budget: int = 0,
    pool: int = 100,
    forms: str = "",
    scope: Scope | None = None,
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
    of the next term's are scored too (`sample`). `forms`: other forms of the query's words
    that the stemmer does not join (pipeline/wordforms.py), matched too; they do not count in
    what the confidence estimate reads (query_idf, missing_idf). With the search's `scope`,
    a namespace kept in the process gives the terms' counts (_frequencies)."""
    lexemes = stemmed_terms(text, scope)
    total, avgdl = namespace_stats(namespace_id)
    if not lexemes:
        return LexicalPlan((), (), avgdl)
    extra = tuple(x for x in stemmed_terms(forms) if x not in lexemes) if forms else ()
    dfs = _frequencies(namespace_id, lexemes + extra, common_rows, total, scope)
    idf = tuple(math.log(1 + (max(total - df, 0) + 0.5) / (df + 0.5)) for df in dfs)
    kept = [(lex, w, df) for lex, w, df in zip(lexemes + extra, idf, dfs, strict=True) if df > 0]
    own_idf, own_dfs = idf[: len(lexemes)], dfs[: len(lexemes)]
    missing = sum(w for w, df in zip(own_idf, own_dfs, strict=True) if df == 0)
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
        query_idf=sum(own_idf),
        missing_idf=missing,
        match=match,
        pairs=pairs,
        sample=sample,
        sample_rows=sample_rows,
    )


def _frequencies(
    namespace_id: int, terms: tuple[str, ...], cap: int, total: int, scope: Scope | None
) -> list[int]:
    """document_frequencies' counts; from a namespace kept in the process where they are the
    same numbers (exact counts up to `cap`, in a namespace too small for the table statistics'
    estimates), with no statement."""
    kept = namespace_vectors.document_frequencies(scope, terms) if scope is not None else None
    if kept is None or (cap and total >= ESTIMATED_FROM_ROWS):
        return document_frequencies(namespace_id, terms, cap, total)
    over = tuple(x for x in terms if cap and kept[x] > cap)  # SQL's capped count, estimated
    if over:
        kept.update(zip(over, document_frequencies(namespace_id, over, cap, total), strict=True))
    return [kept[x] for x in terms]


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


STEMMED_SQL = (
    "SELECT coalesce(array_agg(lexeme ORDER BY lexeme), '{}') "
    "FROM unnest(to_tsvector('english', %s))"
)


# A query's stems, by its text: a repeated query (an assistant asking again, a retry) needs no
# round trip. Bounded: the least recently used go first.
STEMS_KEPT = 4096
_stems: LRUCache[str, tuple[str, ...]] = LRUCache(maxsize=STEMS_KEPT)
_stems_lock = Lock()


def stemmed_terms(text: str, scope: Scope | None = None) -> tuple[str, ...]:
    """The query's terms as the english stemmer stores them, sorted, at most 32 (kept by
    text, STEMS_KEPT of them). With the search's `scope`, a statement that stems the text
    while the search has yet to check its namespace's kept vectors reads that check's
    fingerprint too (namespace_vectors.fingerprint_beside): one round trip where there were
    two."""
    with _stems_lock:
        known = _stems.get(text)
    if known is not None:
        return known
    beside = namespace_vectors.fingerprint_beside(scope)
    sql, params = STEMMED_SQL, list[Any]([text])
    if beside is not None:
        table, table_params = beside
        sql = f"SELECT s.*, f.* FROM ({STEMMED_SQL}) s, {table} f"
        params += table_params
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        terms, *fingerprint = cursor.fetchone()
    if beside is not None and scope is not None:
        namespace_vectors.noted_beside(scope, *fingerprint)
    kept = tuple(terms[:MAX_QUERY_TERMS])
    with _stems_lock:
        _stems[text] = kept
    return kept


def forget_stems() -> None:
    with _stems_lock:
        _stems.clear()


def lexical_search(scope: Scope, plan: LexicalPlan, limit: int) -> list[Hit]:
    """The best `limit` memories in scope by the plan's score (above 0), then the newest, then
    by id (ties are many in a dialog session: one timestamp, one or two matching words), from a
    namespace kept in the process when it keeps this scope (namespace_vectors.keyword)."""
    if not plan.lexemes:
        return []
    kept = namespace_vectors.keyword(scope, plan, limit)
    if kept is not None:
        return [Hit(memory_id, score) for memory_id, score in kept]
    where, params = scope.where()
    score, score_params = plan.score_sql()
    matched = plan.any_query()
    if not plan.sample:
        sql = (
            f"SELECT m.id::text, {score} AS s FROM {MEMORY} m WHERE {where} "
            "AND m.search_vector @@ %s::tsquery ORDER BY s DESC, m.created_at DESC, m.id LIMIT %s"
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
        sql = f"SELECT * FROM ({sql}) c ORDER BY 2 DESC, 3 DESC, c.id::uuid LIMIT %s"
        args.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, args)
        return [Hit(r[0], float(r[1])) for r in cursor.fetchall() if r[1] > 0]
