"""Stage 3, exact strategy: memories holding a phrase of the query verbatim."""

from __future__ import annotations

from collections import Counter

from apps.search.types import Hit

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from ..scope import MEMORY, Scope


def exact_search(scope: Scope, phrases: list[str], limit: int) -> list[Hit]:
    """Memories containing one of the phrases verbatim (case-insensitive) in content or title;
    more phrases rank higher, then an earlier place of the first phrase in the text. A memory
    whose text lacks the first phrase (it holds another, or the phrase is in its title only)
    gets no place bonus and comes after those that have it."""
    # A phrase named twice (a quoted phrase is also one of the query's entities) counts
    # twice, but is compared once per row.
    counted = Counter(p for p in phrases if p.strip())
    if not counted:
        return []
    phrases = list(counted)
    where, params = scope.where()
    patterns = [
        "%" + p.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_") + "%" for p in phrases
    ]
    matches = " + ".join(
        f"((m.content ILIKE %s) OR (m.title ILIKE %s))::int * {counted[p]}" for p in phrases
    )
    match_params = [x for p in patterns for x in (p, p)]
    sql = (
        f"SELECT m.id::text, ({matches}) AS n, "
        "nullif(strpos(lower(m.content), lower(%s)), 0) AS pos FROM "
        f"{MEMORY} m WHERE {where} AND ({matches}) > 0 "
        "ORDER BY n DESC, pos ASC NULLS LAST, m.created_at DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, match_params + [phrases[0]] + params + match_params + [limit])
        rows = cursor.fetchall()
    return [Hit(i, float(n) + (1.0 / (1 + pos) if pos else 0.0)) for i, n, pos in rows]
