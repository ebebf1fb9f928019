"""Stage 3, keyword strategy: BM25 over the stored tsvectors.

Postgres' ts_rank_cd has no inverse document frequency, so on conversational text common
words would dominate. Terms are weighted by a BM25 idf computed over the namespace
(pipeline/stats.py keeps the document frequencies), with BM25's length normalization
(b = 0.4) and a bonus when a term hits the title (A) or tags / trigger phrases (B), so title
hits beat body hits. Query terms go through the same english parser/stemmer as the stored
tsvector and are OR-ed (websearch AND-semantics would drop most questions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from apps.search.types import Hit

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.db_router import read_connection as connection

from ..scope import MEMORY, Scope, tsquery_literal
from .stats import document_frequencies, namespace_stats

K1 = 1.2
B = 0.4
TITLE_BONUS = 0.5
TAG_BONUS = 0.1
MAX_QUERY_TERMS = 32


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

    def score_sql(self, alias: str = "m") -> tuple[str, list]:
        if not self.lexemes:
            return "0.0", []
        parts, params = [], []
        for lexeme, idf in zip(self.lexemes, self.idf, strict=True):
            q = tsquery_literal(lexeme)
            parts.append(
                f"%s * ((sv @@ %s::tsquery)::int + {TITLE_BONUS} * (sv @@ %s::tsquery)::int"
                f" + {TAG_BONUS} * (sv @@ %s::tsquery)::int)".replace(
                    "sv", f"{alias}.search_vector"
                )
            )
            params += [idf, q, q + ":A", q + ":B"]
        norm = (
            f"({K1 + 1} / (1 + {K1} * (1 - {B} + {B} * length({alias}.search_vector)::float / %s)))"
        )
        params.append(max(self.avgdl, 1.0))
        return f"(({' + '.join(parts)}) * {norm})", params

    def any_query(self) -> str:
        return " | ".join(tsquery_literal(x) for x in self.match or self.lexemes)


def lexical_plan(text: str, namespace_id: int, common_rows: int = 0) -> LexicalPlan:
    """Stem the query like the stored vectors, then weigh each term by its namespace idf.
    With `common_rows`, a term found in more memories than that is left out of what a
    candidate must match (it still counts in the score); if every term is that common, the
    rarest one is matched."""
    lexemes = stemmed_terms(text)
    total, avgdl = namespace_stats(namespace_id)
    if not lexemes:
        return LexicalPlan((), (), avgdl)
    dfs = document_frequencies(namespace_id, lexemes)
    idf = tuple(math.log(1 + (total - df + 0.5) / (df + 0.5)) for df in dfs)
    kept = [(lex, w, df) for lex, w, df in zip(lexemes, idf, dfs, strict=True) if df > 0]
    missing = sum(w for w, df in zip(idf, dfs, strict=True) if df == 0)
    match: tuple[str, ...] = ()
    if common_rows and kept and max(df for _, _, df in kept) > common_rows:
        match = tuple(lex for lex, _, df in kept if df <= common_rows)
        match = match or (min(kept, key=lambda k: k[2])[0],)
    return LexicalPlan(
        tuple(x for x, _, _ in kept),
        tuple(w for _, w, _ in kept),
        avgdl,
        query_idf=sum(idf),
        missing_idf=missing,
        match=match,
    )


def stemmed_terms(text: str) -> tuple[str, ...]:
    """The query's terms as the english stemmer stores them, sorted, at most 32."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(array_agg(lexeme ORDER BY lexeme), '{}') "
            "FROM unnest(to_tsvector('english', %s))",
            [text],
        )
        return tuple(cursor.fetchone()[0][:MAX_QUERY_TERMS])


def lexical_search(scope: Scope, plan: LexicalPlan, limit: int) -> list[Hit]:
    if not plan.lexemes:
        return []
    where, params = scope.where()
    score, score_params = plan.score_sql()
    sql = (
        f"SELECT m.id::text, {score} AS s FROM {MEMORY} m WHERE {where} "
        "AND m.search_vector @@ %s::tsquery ORDER BY s DESC, m.created_at DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, score_params + params + [plan.any_query(), limit])
        return [Hit(i, float(s)) for i, s in cursor.fetchall() if s > 0]
