"""A memory's writable fields, declared once.

Names, kinds, limits, choices, defaults and descriptions live here and nowhere else: the write
path's validation (validation.py), the REST serializers (api/serializers.py) and the MCP tools'
argument annotations (mcp/tools.py) are all derived from this list, so the doors cannot
disagree about what a memory accepts.

`writable` says where a field may be set: "always" (create and update), "create" (create only:
identity and the original time), "import" (restoring an export: ids and updated_at).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings

from .models import Category, Tier

Kind = Literal["text", "strings", "tags", "choice", "number", "json", "instant", "id"]


@dataclass(frozen=True)
class MemoryField:
    name: str
    kind: Kind
    description: str
    max_length: int = 0  # characters of a text, or of each item of a list
    max_items: int = 0  # lists only
    choices: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()  # (value, label) pairs of choices, for docs
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    required: bool = False  # on create
    writable: Literal["always", "create", "import"] = "always"


MEMORY_FIELDS: tuple[MemoryField, ...] = (
    MemoryField(
        "content",
        "text",
        "What to remember, self-contained (markdown is fine; long documents are split into "
        "linked chunks).",
        max_length=settings.MEMORY_MAX_CONTENT_CHARS,
        required=True,
    ),
    MemoryField("title", "text", "A short title.", max_length=300, default=""),
    MemoryField(
        "category",
        "choice",
        "decision (a choice and why), pattern (how things are done), warning (a pitfall), "
        "learning, fact, note, conversation.",
        choices=tuple(Category.values),
        labels=tuple(Category.choices),
        default=Category.NOTE.value,
    ),
    MemoryField(
        "tags",
        "tags",
        "Tags (lowercase words or kebab-case); on update they replace the memory's tags.",
        max_length=64,
        max_items=50,
        default=(),
    ),
    MemoryField("file_path", "text", "Source file this is about.", max_length=1000, default=""),
    MemoryField(
        "source", "text", "Where it came from (tool, url, person).", max_length=200, default=""
    ),
    MemoryField(
        "trigger_phrases",
        "strings",
        "Phrases that should find this memory.",
        max_length=200,
        max_items=20,
        default=(),
    ),
    MemoryField(
        "tier",
        "choice",
        "constitutional (always true rules), core, normal, scratch (fades).",
        choices=tuple(Tier.values),
        labels=tuple(Tier.choices),
        default=Tier.NORMAL.value,
    ),
    MemoryField("importance", "number", "Quality score 0..1.", minimum=0, maximum=1, default=0.5),
    MemoryField("metadata", "json", "Free-form JSON object.", default=None),
    MemoryField(
        "created_at",
        "instant",
        "When it happened: ISO 8601 date or date-time (no zone means UTC), years 1900..2200.",
        writable="create",
    ),
    MemoryField(
        "valid_from",
        "instant",
        "Since when the fact holds, if not since it is stored (a fact learnt late): ISO 8601 "
        "date or date-time.",
    ),
    MemoryField(
        "valid_until",
        "instant",
        "When the fact stops holding, if known (ISO 8601). Superseding sets it.",
    ),
    MemoryField(
        "supersedes",
        "strings",
        "Ids of memories this one replaces (an update of a fact): their validity ends where "
        "this one's begins and search stops returning them as current.",
        max_length=200,
        max_items=20,
        default=(),
        writable="create",
    ),
    MemoryField(
        "external_id",
        "text",
        "Your own id for this memory (e.g. from another system).",
        max_length=200,
        writable="create",
    ),
    MemoryField("id", "id", "The memory's id when restoring an export.", writable="import"),
    MemoryField(
        "updated_at", "instant", "Last change, when restoring an export.", writable="import"
    ),
)

BY_NAME = {f.name: f for f in MEMORY_FIELDS}
ALL_NAMES = frozenset(BY_NAME)
CREATE_FIELDS = tuple(f for f in MEMORY_FIELDS if f.writable in ("always", "create"))
UPDATE_FIELDS = tuple(f for f in MEMORY_FIELDS if f.writable == "always")
UPDATABLE = frozenset(f.name for f in UPDATE_FIELDS)
