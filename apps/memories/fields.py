"""A memory's writable fields, declared once: MemoryCreate (and MemoryPatch, derived from it).

One line per field: its type (limits and choices), default and description. The write path
validates against it (validation.py, at the top of the create and update services), the MCP
tools take the models as they are (remember, remember_batch's items, update_memory), REST
derives its serializers from them (apps/api/fields.py), and the revision history and the admin
read the field names from here.

Where a field may be set: every field on create; MemoryPatch (update) leaves out CREATE_ONLY
(identity and the original time); MemoryImport (restoring an export) adds ids and updated_at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, create_model

from apps.core.schema import Choice, Instant, Json, Number, Strings, Text, specs

from .models import Category, Tier


class MemoryCreate(BaseModel):
    """One memory as a client sends it (remember, REST's create, a batch item)."""

    model_config = ConfigDict(extra="forbid")

    content: Text(settings.MEMORY_MAX_CONTENT_CHARS, nonblank=True) = Field(
        description=(
            "What to remember, self-contained (markdown is fine; long documents are split into "
            "linked chunks)."
        ),
    )
    title: Text(300) | None = Field("", description="A short title.")
    category: Choice(tuple(Category.values), tuple(Category.choices)) | None = Field(
        Category.NOTE.value,
        description=(
            "decision (a choice and why), pattern (how things are done), warning (a pitfall), "
            "learning, fact, note, conversation."
        ),
    )
    tags: Strings(50, 64, kind="tags") | None = Field(
        None,
        description=(
            "Tags (lowercase words or kebab-case); on update they replace the memory's tags."
        ),
    )
    file_path: Text(1000) | None = Field("", description="Source file this is about.")
    source: Text(200) | None = Field("", description="Where it came from (tool, url, person).")
    trigger_phrases: Strings(20, 200, nonblank=False) | None = Field(
        None, description="Phrases that should find this memory."
    )
    tier: Choice(tuple(Tier.values), tuple(Tier.choices)) | None = Field(
        Tier.NORMAL.value,
        description="constitutional (always true rules), core, normal, scratch (fades).",
    )
    importance: Number(0, 1) | None = Field(0.5, description="Quality score 0..1.")
    metadata: Json | None = Field(None, description="Free-form JSON object.")
    created_at: Instant | None = Field(
        None,
        description=(
            "When it happened: ISO 8601 date or date-time (no zone means UTC), years 1900..2200."
        ),
    )
    valid_from: Instant | None = Field(
        None,
        description=(
            "Since when the fact holds, if not since it is stored (a fact learnt late): ISO 8601 "
            "date or date-time."
        ),
    )
    valid_until: Instant | None = Field(
        None, description="When the fact stops holding, if known (ISO 8601). Superseding sets it."
    )
    supersedes: Strings(20, 200, nonblank=False) | None = Field(
        None,
        description=(
            "Ids of memories this one replaces (an update of a fact): their validity ends where "
            "this one's begins and search stops returning them as current."
        ),
    )
    caused_by: Strings(20, 200, nonblank=False) | None = Field(
        None,
        description=(
            "Ids of memories that led to this one (the incident behind a decision, the finding "
            "behind a rule): each gets a `caused` link to it, so asking why finds them."
        ),
    )
    depends_on: Strings(20, 200, nonblank=False) | None = Field(
        None,
        description=(
            "Ids of memories this one rests on (a runbook step on the fact it assumes): when "
            "one of them is superseded, deleted or edited, this memory is marked for re-check."
        ),
    )
    external_id: Text(200) | None = Field(
        None, description="Your own id for this memory (e.g. from another system)."
    )
    source_url: Text(2000) | None = Field(
        None,
        description=(
            "The page or document this memory was learnt from (http or https), kept with its "
            "provenance."
        ),
    )


# Links a write may draw from the memory it creates: field -> (relation, new memory is source).
WRITE_LINKS = {"caused_by": ("caused", False), "depends_on": ("depends_on", True)}
CREATE_ONLY = frozenset({"created_at", "supersedes", "external_id", "source_url", *WRITE_LINKS})


class MemoryImport(MemoryCreate):
    """A memory restored from an export: it may keep its id and last change."""

    id: Text(200) | None = Field(None, description="The memory's id when restoring an export.")
    updated_at: Instant | None = Field(None, description="Last change, when restoring an export.")
    provenance: Json | None = Field(
        None, description="Where the memory came from, as an export writes it; kept as it is."
    )


MemoryPatch = create_model(
    "MemoryPatch",
    __config__=ConfigDict(extra="forbid"),
    __doc__="The fields an update may change; only those given change.",
    **{
        name: (info.rebuild_annotation() | None, Field(None, description=info.description))
        for name, info in MemoryCreate.model_fields.items()
        if name not in CREATE_ONLY
    },
)


@dataclass(frozen=True)
class MemoryField:
    """One declared field as the write path's checks read it (kind and limits from its type)."""

    name: str
    kind: str
    description: str
    max_length: int = 0  # characters of a text, or of each item of a list
    max_items: int = 0  # lists only
    choices: tuple[str, ...] = ()
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    required: bool = False  # on create


def _fields(model: type[BaseModel]) -> tuple[MemoryField, ...]:
    return tuple(
        MemoryField(
            name=name,
            kind="id" if name == "id" else spec.kind,
            description=info.description or "",
            max_length=spec.max_length or 0,
            max_items=spec.max_items or 0,
            choices=spec.choices,
            default=None if info.is_required() else info.default,
            minimum=spec.minimum,
            maximum=spec.maximum,
            required=info.is_required(),
        )
        for name, (spec, info) in specs(model).items()
    )


MEMORY_FIELDS = _fields(MemoryImport)
BY_NAME = {f.name: f for f in MEMORY_FIELDS}
ALL_NAMES = frozenset(BY_NAME)
CREATE_FIELDS = _fields(MemoryCreate)
UPDATE_FIELDS = _fields(MemoryPatch)
UPDATABLE = frozenset(MemoryPatch.model_fields)
