"""The search request, declared once: SearchParams.

One line per argument: its type (bounds and choices), default and description. The service
validates against it (`SearchRequest.build`, at the top of search()); the MCP tools take the
model as it is (apps/mcp/arguments.py spreads its fields into the tool's arguments), REST
derives its serializer from it (apps/api/fields.py) and the UI's search form shows its fields
and puts the service's errors next to them. A bound, choice or default changes here and
nowhere else; a new argument is one more line here (docs/architecture.md shows one).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticUndefined

from apps.core.dates import parse_instant
from apps.core.exceptions import NotFound, ValidationFailed
from apps.core.schema import (
    Boolean,
    Choice,
    Choices,
    Instant,
    Integer,
    Number,
    Spec,
    Strings,
    Text,
    specs,
)
from apps.core.values import text_problem
from apps.memories.models import Category, Namespace
from apps.memories.provenance import DOORS

from .config import search_settings
from .pipeline.timeexpr import TimeOutOfRange, TimeRange, parse_time_expression
from .stages import STAGES

MODES = ("hybrid", "semantic", "exact", "deep")
QUERY_MAX_CHARS = search_settings().query_max_chars
INSTANT = (
    " ISO 8601 date or date-time, e.g. 2024-03-01 or 2024-03-01T09:30:00Z (no zone means UTC)."
)


class SearchParams(BaseModel):
    """What every door offers (REST, MCP, the UI form). `query` must be sent at REST and MCP
    (it may be empty); the service defaults it."""

    model_config = ConfigDict(extra="forbid")

    query: Text(QUERY_MAX_CHARS) = Field(
        description=(
            "What to look for, in natural language or keywords. An empty query lists the newest "
            "memories that pass the filters."
        ),
    )
    mode: Choice(MODES) = Field(
        "hybrid",
        description=(
            "hybrid (default: keyword + semantic + graph fused), semantic (meaning only), exact "
            "(substring/phrase), deep (also searches up to 3 query variants)."
        ),
    )
    time_expr: Text(200) | None = Field(
        None,
        description=(
            "Natural time filter, e.g. 'yesterday', 'last week', '3 days ago', 'since March'."
        ),
    )
    after: Instant | None = Field(
        None, description="Only memories created at or after this instant." + INSTANT
    )
    before: Instant | None = Field(
        None, description="Only memories created before this instant." + INSTANT
    )
    tags: Strings(50, 64) | None = Field(None, description="Only memories with any of these tags.")
    categories: Choices(tuple(Category.values)) | None = Field(
        None, description="Only memories of these categories."
    )
    file_path: Text(1000) | None = Field(
        None, description="Only memories from this source file (or folder)."
    )
    person: Text(150) | None = Field(
        None, description="Only memories written by this person (a username)."
    )
    credential: Text(200) | None = Field(
        None, description="Only memories written with this API token or OAuth app (its name)."
    )
    door: Choice(DOORS) | None = Field(
        None, description="Only memories written through this door: " + ", ".join(DOORS) + "."
    )
    quality_boost: Number(0.0, 1.0) = Field(
        0.0, description="0..1: how much a memory's quality score lifts it."
    )
    limit: Integer(1, 100) = Field(10, description="Maximum number of memories to return.")
    include_debug: Boolean = Field(
        False,
        description=(
            "Explain the ranking: intent, weights, per-strategy ranks and scores, boosts, "
            "diversity/MMR moves, timings."
        ),
    )
    token_budget: Integer(50, 20000) | None = Field(
        None, description="Cap the answer text at about this many tokens."
    )
    as_of: Instant | None = Field(
        None,
        description=(
            "Answer as of this instant: only memories stored by then and valid then, with the "
            "content they had then; time expressions count from it. Default: now (memories "
            "valid now; superseded ones are left out)." + INSTANT
        ),
    )
    include_superseded: Boolean = Field(
        False,
        description=(
            "Also return memories that are no longer valid (superseded or ended), marked by "
            "valid_until and superseded_by."
        ),
    )


class SearchArguments(SearchParams):
    """Also the arguments for the service's own callers (evaluate, tests), not offered at
    REST, MCP or the UI."""

    now: Instant | None = Field(
        None,
        description=(
            "Resolve time expressions relative to this instant (default: now); unlike as_of it "
            "does not restrict validity."
        ),
    )
    disabled_stages: Choices(STAGES) | None = Field(
        None, description="Pipeline stages to switch off for this search."
    )


@dataclass(frozen=True)
class SearchRequest:
    """A validated search: the namespace resolved, dates parsed, the time expression merged
    into after/before, lists de-duplicated. Build it with `SearchRequest.build(...)`."""

    namespace: Namespace
    query: str = ""
    mode: str = "hybrid"
    after: datetime | None = None
    before: datetime | None = None
    time_phrase: str = ""
    tags: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    file_path: str = ""
    person: str = ""
    credential: str = ""
    door: str = ""
    quality_boost: float = 0.0
    limit: int = 10
    include_debug: bool = False
    now: datetime | None = None
    disabled: tuple[str, ...] = ()
    token_budget: int | None = None
    as_of: datetime | None = None
    include_superseded: bool = False

    @classmethod
    def build(
        cls,
        *,
        namespace: Namespace | str,
        model: type[SearchArguments] = SearchArguments,
        **raw: Any,
    ) -> SearchRequest:
        """Validate raw arguments against `model`; ValidationFailed names every bad field."""
        declared = specs(model)
        unknown = sorted(set(raw) - set(declared))
        if unknown:
            raise TypeError(f"search() got unexpected argument(s): {', '.join(unknown)}")
        errors: dict[str, str] = {}
        ns = _namespace(namespace)
        v = {
            name: _clean(name, spec, _default(spec, info.default), raw.get(name), errors)
            for name, (spec, info) in declared.items()
        }
        now = v["as_of"] or v["now"] or timezone.now()
        after, before = v["after"], v["before"]
        parsed = _time_range(v["time_expr"], now, errors)
        if parsed and parsed.after and (after is None or parsed.after > after):
            after = parsed.after
        if parsed and parsed.before and (before is None or parsed.before < before):
            before = parsed.before
        if after and before and after >= before and "after" not in errors:
            errors.setdefault("before", "Must be later than 'after'.")
        query, file_path = v["query"] or "", v["file_path"] or ""
        origin = {k: v[k] or "" for k in ("person", "credential", "door")}
        filters = (v["tags"], v["categories"], file_path, after, before, *origin.values())
        if not query and not any(filters):
            errors.setdefault("query", "A query (or at least one filter) is required.")
        if errors:
            raise ValidationFailed(errors)
        # Arguments the request holds as they are validated; the rest worked out above.
        same_name = {name: value for name, value in v.items() if name in _REQUEST_FIELDS}
        worked_out = {
            "namespace": ns,
            "query": query,
            "after": after,
            "before": before,
            "time_phrase": parsed.phrase if parsed else "",
            "file_path": file_path,
            **origin,
            "now": now,
            "disabled": v["disabled_stages"],
        }
        return cls(**{**same_name, **worked_out})


_REQUEST_FIELDS = frozenset(SearchRequest.__dataclass_fields__)


def _default(spec: Spec, declared: Any) -> Any:
    """The service's default: an empty list as (), a required argument (query) as ""."""
    if spec.kind in ("strings", "choices"):
        return ()
    return "" if declared is PydanticUndefined else declared


def _clean(name: str, spec: Spec, default: Any, value: Any, errors: dict[str, str]) -> Any:
    """One argument checked against its declaration; the default when absent."""
    if value is None or (value == "" and spec.kind != "text"):
        return default
    try:
        if spec.kind == "instant":
            return parse_instant(value, field=name)
        return _CHECKS[spec.kind](spec, value)
    except ValidationFailed as exc:
        errors[name] = exc.errors[name][0]
    except ValueError as exc:
        errors[name] = str(exc)
    return default


def _text(arg: Spec, given: Any) -> str:
    if not isinstance(given, str):
        raise ValueError("Expected text.")
    value = given.strip()
    if arg.max_length is not None and len(value) > arg.max_length:
        raise ValueError(f"At most {arg.max_length} characters.")
    # What PostgreSQL cannot hold as text it cannot search for either (a NUL, a lone surrogate).
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _choice(arg: Spec, value: Any) -> str:
    if value not in arg.choices:
        raise ValueError(f"One of {', '.join(arg.choices)}.")
    return str(value)


def _bounds(arg: Spec) -> tuple[float, float]:
    """The range of a number field (schema.Number always sets both ends)."""
    assert arg.minimum is not None and arg.maximum is not None
    return arg.minimum, arg.maximum


def _range_message(arg: Spec, what: str) -> str:
    return f"{what} from {arg.minimum:g} to {arg.maximum:g}."


def _integer(arg: Spec, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(_range_message(arg, "An integer"))
    if not arg.minimum <= value <= arg.maximum:
        raise ValueError(_range_message(arg, "An integer"))
    return int(value)


def _number(arg: Spec, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(_range_message(arg, "A number")) from None
    low, high = _bounds(arg)
    if isinstance(value, bool) or not low <= number <= high:
        raise ValueError(_range_message(arg, "A number"))
    return number


def _boolean(arg: Spec, value: Any) -> bool:
    return bool(value)


def _strings(arg: Spec, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, Iterable) or not all(isinstance(v, str) for v in value):
        raise ValueError("Expected a list of strings.")
    items = tuple(dict.fromkeys(v.strip() for v in value if v.strip()))
    if arg.max_items is not None and len(items) > arg.max_items:
        raise ValueError(f"At most {arg.max_items} items.")
    unstorable = next((p for p in map(text_problem, items) if p), None)
    if unstorable:
        raise ValueError(unstorable)
    too_long = [v for v in items if arg.max_length and len(v) > arg.max_length]
    if too_long:
        raise ValueError(f"{too_long[0][:20]!r}: at most {arg.max_length} characters an item.")
    return items


def _choices(arg: Spec, value: Any) -> tuple[str, ...]:
    items = _strings(arg, value)
    bad = [v for v in items if v not in arg.choices]
    if bad:
        raise ValueError(f"Unknown value {bad[0]!r}; one of {', '.join(arg.choices)}.")
    return items


_CHECKS = {
    "text": _text,
    "choice": _choice,
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
    "strings": _strings,
    "choices": _choices,
}


def _time_range(time_expr: str | None, now: datetime, errors: dict[str, Any]) -> TimeRange | None:
    if not time_expr or "time_expr" in errors:
        return None
    try:
        parsed = parse_time_expression(time_expr, now)
    except TimeOutOfRange as exc:
        errors["time_expr"] = str(exc)
        return None
    if parsed is None:
        errors["time_expr"] = f"Could not understand the time expression {time_expr!r}."
    return parsed


def _namespace(value: object) -> Namespace:
    if isinstance(value, Namespace):
        return value
    if isinstance(value, str) and value:
        try:
            return Namespace.objects.get(name=value)
        except Namespace.DoesNotExist:
            raise NotFound(f"namespace {value!r} does not exist") from None
    raise ValidationFailed({"namespace": "A namespace (object or name) is required."})
