"""Tag rows for the write path (creating and changing memories)."""

from __future__ import annotations

from collections.abc import Iterable

from ..models import Tag


def tag_ids(names: Iterable[str]) -> dict[str, int]:
    """{name: id} for `names`, creating the tags that do not exist yet (race-safe)."""
    names = set(names)
    if not names:
        return {}
    Tag.objects.bulk_create([Tag(name=n) for n in names], ignore_conflicts=True)
    return dict(Tag.objects.filter(name__in=names).values_list("name", "id"))
