"""The field types that request declarations are written in (pydantic models such as
apps.search.params.SearchParams and apps.memories.fields.MemoryCreate).

Each type is a pydantic type with its constraints (so a model built from them validates, and
gives the MCP tools their JSON schema) that also carries a `Spec`: the kind and bounds the
services check with their own words, and that the REST adapter (apps/api/fields.py) turns into
a DRF field. A model field then reads as one line, e.g.

    limit: Integer(1, 100) = Field(10, description="Maximum number of memories to return.")
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo


@dataclass(frozen=True)
class Spec:
    """What a field is, for the services' checks and the REST adapter: `max_length` counts the
    characters of a text or of each item of a list, `max_items` a list's items."""

    kind: str
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    max_items: int | None = None
    choices: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()  # (value, label) pairs of choices, for docs
    nonblank: bool = False  # a text that must hold more than white space


def Text(max_length: int, *, nonblank: bool = False) -> Any:
    constraints = Field(max_length=max_length, min_length=1 if nonblank else None)
    return Annotated[str, constraints, Spec("text", max_length=max_length, nonblank=nonblank)]


def Choice(choices: tuple[str, ...], labels: tuple[tuple[str, str], ...] = ()) -> Any:
    return Annotated[Literal[choices], Spec("choice", choices=choices, labels=labels)]


def Integer(minimum: int, maximum: int) -> Any:
    return Annotated[int, Field(ge=minimum, le=maximum), Spec("integer", minimum, maximum)]


def Number(minimum: float, maximum: float) -> Any:
    return Annotated[float, Field(ge=minimum, le=maximum), Spec("number", minimum, maximum)]


def Strings(max_items: int, max_length: int, *, kind: str = "strings", nonblank=True) -> Any:
    """A list of texts; kind "tags" for tag names (checked and normalised as tags)."""
    item = Annotated[str, Field(min_length=1 if nonblank else None, max_length=max_length)]
    spec = Spec(kind, max_length=max_length, max_items=max_items)
    return Annotated[list[item], Field(max_length=max_items), spec]


def Choices(choices: tuple[str, ...]) -> Any:
    spec = Spec("choices", max_items=len(choices), choices=choices)
    return Annotated[list[Literal[choices]], Field(max_length=len(choices)), spec]


Boolean = Annotated[bool, Spec("boolean")]
# A date or date-time as sent; the services parse it (apps.core.dates.parse_instant).
Instant = Annotated[str, Field(max_length=64), Spec("instant")]
Json = Annotated[dict[str, Any], Spec("json")]


def spec_of(info: FieldInfo) -> Spec:
    """The Spec of a model field, also when the field is optional (`Text(200) | None`)."""
    for meta in info.metadata:
        if isinstance(meta, Spec):
            return meta
    for arg in get_args(info.annotation):
        for meta in getattr(arg, "__metadata__", ()):
            if isinstance(meta, Spec):
                return meta
    raise LookupError(f"{info!r} is not declared with an apps.core.schema type")


@cache
def specs(model: type[BaseModel]) -> dict[str, tuple[Spec, FieldInfo]]:
    """Each field of `model` with its Spec, in declaration order (read once per model: every
    search validates against it)."""
    return {name: (spec_of(info), info) for name, info in model.model_fields.items()}
