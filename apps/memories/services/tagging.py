"""Renaming and deleting tags. Every memory carrying the tag changes, so each gets a revision."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import transaction

from apps.core.exceptions import ValidationFailed

from .. import revisions
from ..models import Memory, Tag
from ..tags import TAG_NAME_RE, normalize_tag


@transaction.atomic
def tag_rename(*, tag: Tag, name: str, actor: revisions.Actor = None, door: str = "system") -> Tag:
    name = normalize_tag(name or "")
    if not TAG_NAME_RE.match(name):
        raise ValidationFailed({"name": f"{name!r} is not a valid tag (a-z, 0-9, - _ . : /)."})
    old = Tag.objects.filter(pk=tag.pk).values_list("name", flat=True).first()
    if old is None or old == name:
        return tag
    if Tag.objects.filter(name=name).exclude(pk=tag.pk).exists():
        raise ValidationFailed({"name": f"A tag named {name!r} exists already."})
    changes = _tag_changes(tag, old, name)
    tag.name = name
    tag.save(update_fields=["name"])
    revisions.record(changes, actor=actor, door=door)
    return tag


@transaction.atomic
def tag_delete(*, tag: Tag, actor: revisions.Actor = None, door: str = "system") -> None:
    changes = _tag_changes(tag, tag.name, None)
    tag.delete()
    revisions.record(changes, actor=actor, door=door)


def _tag_changes(tag: Tag, old: str, new: str | None) -> list[revisions.Change]:
    """For each memory with `tag`: its tag list before, and after `old` becomes `new` (or goes)."""
    through = Memory.tags.through
    carriers = dict(
        through.objects.filter(tag_id=tag.pk).values_list("memory_id", "memory__namespace_id")
    )
    names: defaultdict[Any, list[str]] = defaultdict(list)
    for memory_id, tag_name in through.objects.filter(memory_id__in=carriers).values_list(
        "memory_id", "tag__name"
    ):
        names[memory_id].append(tag_name)
    changes: list[revisions.Change] = []
    for memory_id, namespace_id in carriers.items():
        before = sorted(names[memory_id])
        renamed = {new if n == old else n for n in before}
        after = sorted(n for n in renamed if n is not None)
        changes.append(
            revisions.Change(
                memory_id, namespace_id, revisions.Action.UPDATE, {"tags": before}, {"tags": after}
            )
        )
    return changes
