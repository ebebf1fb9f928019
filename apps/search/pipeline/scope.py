"""The WHERE clause every candidate query shares: namespace (always), not archived, valid at
the search's moment, and the caller's filters. Filters live inside the candidate SQL, never
after a top-k cut."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from apps.memories.models import Memory, Passage, Tag

MEMORY = Memory._meta.db_table
MEMORY_TAGS = Memory.tags.through._meta.db_table
TAG = Tag._meta.db_table
PASSAGE = Passage._meta.db_table

# A memory row's tag names, in the order of their ids: its links read from their index, each
# name by the tag's key. (A join of the links to the tag table built a hash of the whole tag
# table once per row, about a quarter of the row fetch's time.)
TAG_NAMES = (
    f"ARRAY(SELECT (SELECT t.name FROM {TAG} t WHERE t.id = mt.tag_id) FROM {MEMORY_TAGS} mt "
    "WHERE mt.memory_id = m.id ORDER BY mt.tag_id)"
)
ASKS = "right(rtrim(m.content), 1) = '?'"  # the memory's text ends with a question mark


def uuid_array(ids: Iterable[str]) -> str:
    """Memory ids as one PostgreSQL array literal, for `= ANY(%s::uuid[])`. psycopg dumps a
    Python list element by element, which cost a search about half a millisecond over its few
    hundred candidates. The ids come from our own queries; a malformed one fails the cast."""
    return "{" + ",".join(ids) + "}"


def tsquery_literal(lexeme: str) -> str:
    """One stemmed term as a quoted tsquery operand."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass(frozen=True)
class Scope:
    namespace_id: int
    tags: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    file_path: str = ""
    # Provenance (apps/memories/provenance.py): who wrote it, with which credential, where.
    person: str = ""
    credential: str = ""
    door: str = ""
    after: datetime | None = None
    before: datetime | None = None
    # Validity: the memories valid at `valid_at` (None: any); with `learnt_by`, only those
    # stored by then (an "as of" search). A search of now passes now and no learnt_by.
    valid_at: datetime | None = None
    learnt_by: datetime | None = None

    @property
    def filtered(self) -> bool:
        """True when a filter beyond the namespace narrows the scope."""
        return bool(
            self.tags
            or self.categories
            or self.file_path
            or self.after
            or self.before
            or self.person
            or self.credential
            or self.door
        )

    def where(self, alias: str = "m", *, probe_tags: bool = False) -> tuple[str, list[Any]]:
        """The clause and its parameters. `probe_tags` writes the tag filter as a per-row
        index probe instead of EXISTS: inside a scan that stops at its first rows (a LATERAL
        ... LIMIT 1, an HNSW scan) PostgreSQL would otherwise turn EXISTS into a semi-join
        that reads every memory carrying the tag, once per outer row (9 s at 100k)."""
        # Memories waiting for review are found by no search: a column of the row, no join.
        clauses = [
            f"{alias}.namespace_id = %s",
            f"NOT {alias}.archived",
            f"{alias}.review = 'approved'",
        ]
        params: list[Any] = [self.namespace_id]
        if self.categories:
            clauses.append(f"{alias}.category = ANY(%s)")
            params.append(list(self.categories))
        if self.file_path:
            clauses.append(f"({alias}.file_path = %s OR {alias}.file_path LIKE %s)")
            prefix = self.file_path.rstrip("/").replace("%", r"\%").replace("_", r"\_")
            params += [self.file_path, prefix + "/%"]
        for column, value in (
            ("origin_person", self.person),
            ("origin_credential", self.credential),
            ("origin_door", self.door),
        ):
            if value:
                clauses.append(f"{alias}.{column} = %s")
                params.append(value)
        if self.after is not None:
            clauses.append(f"{alias}.created_at >= %s")
            params.append(self.after)
        if self.before is not None:
            clauses.append(f"{alias}.created_at < %s")
            params.append(self.before)
        if self.valid_at is not None:
            # Row predicates on columns of the row already read: no join, no subquery. A
            # null valid_from means "since created_at", which an as-of search checks below.
            clauses.append(
                f"({alias}.valid_until IS NULL OR {alias}.valid_until > %s) "
                f"AND ({alias}.valid_from IS NULL OR {alias}.valid_from <= %s)"
            )
            params += [self.valid_at, self.valid_at]
        if self.learnt_by is not None:
            clauses.append(f"{alias}.created_at <= %s")
            params.append(self.learnt_by)
        if self.tags and probe_tags:
            clauses.append(
                f"(SELECT true FROM {MEMORY_TAGS} mt JOIN {TAG} t ON t.id = mt.tag_id "
                f"WHERE mt.memory_id = {alias}.id AND t.name = ANY(%s) LIMIT 1)"
            )
            params.append(list(self.tags))
        elif self.tags:
            clauses.append(
                f"EXISTS (SELECT 1 FROM {MEMORY_TAGS} mt JOIN {TAG} t ON t.id = mt.tag_id "
                f"WHERE mt.memory_id = {alias}.id AND t.name = ANY(%s))"
            )
            params.append(list(self.tags))
        return " AND ".join(clauses), params
