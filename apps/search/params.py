"""The search request, declared once.

SEARCH_ARGS names every argument of search() with its kind, default, limits and choices. The
service validates against it (`SearchRequest.build`), and every door derives its own
declaration from it: the REST serializer (apps/api/serializers.py), the MCP tool signatures
including the old tool names (apps/mcp/search_args.py) and the UI's search form fields
(apps/search/forms.py). A bound, choice or default changes here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any, Literal

from django.utils import timezone

from apps.core.dates import parse_instant
from apps.core.exceptions import NotFound, ValidationFailed
from apps.core.values import text_problem
from apps.memories.models import Category, Namespace

from .config import search_settings
from .pipeline.timeexpr import TimeOutOfRange, TimeRange, parse_time_expression
from .stages import STAGES

MODES = ("hybrid", "semantic", "exact", "deep")

Kind = Literal["text", "choice", "integer", "number", "boolean", "strings", "choices", "instant"]


@dataclass(frozen=True)
class Arg:
    """One search argument (laid out like apps/memories/fields.MemoryField): `max_length`
    counts the characters of a text or of each item of a list, `max_items` a list's items;
    `required` ones must be sent at REST and MCP (the service defaults them). Internal
    arguments (`public=False`) are for the service's own callers (evaluate, tests), not
    offered at REST, MCP or the UI."""

    kind: Kind
    help: str
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    max_items: int | None = None
    choices: tuple[str, ...] = ()
    public: bool = True
    required: bool = False  # the doors ask for it (it may still be empty)

    def but(self, **changes: Any) -> Arg:
        """A copy with some attributes changed (what a door or a test adjusts)."""
        return replace(self, **changes)


def _declare() -> Mapping[str, Arg]:
    # A table of data, laid out by hand: one entry per argument.
    categories = tuple(Category.values)
    return MappingProxyType({
        "query": Arg(
            "text", "What to look for, in natural language or keywords. An empty query lists "
            "the newest memories that pass the filters.", default="",
            max_length=search_settings().query_max_chars, required=True,
        ),
        "mode": Arg(
            "choice", "hybrid (default: keyword + semantic + graph fused), semantic (meaning "
            "only), exact (substring/phrase), deep (also searches up to 3 query variants).",
            default="hybrid", choices=MODES,
        ),
        "time_expr": Arg(
            "text", "Natural time filter, e.g. 'yesterday', 'last week', '3 days ago', "
            "'since March'.", max_length=200,
        ),
        "after": Arg("instant", "Only memories created at or after this instant."),
        "before": Arg("instant", "Only memories created before this instant."),
        "tags": Arg(
            "strings", "Only memories with any of these tags.", default=(), max_items=50,
            max_length=64,
        ),
        "categories": Arg(
            "choices", "Only memories of these categories.", default=(),
            max_items=len(categories), choices=categories,
        ),
        "file_path": Arg(
            "text", "Only memories from this source file (or folder).", max_length=1000
        ),
        "quality_boost": Arg(
            "number", "0..1: how much a memory's quality score lifts it.", default=0.0,
            minimum=0.0, maximum=1.0,
        ),
        "limit": Arg(
            "integer", "Maximum number of memories to return.", default=10, minimum=1,
            maximum=100,
        ),
        "include_debug": Arg(
            "boolean", "Explain the ranking: intent, weights, per-strategy ranks and scores, "
            "boosts, diversity/MMR moves, timings.", default=False,
        ),
        "token_budget": Arg(
            "integer", "Cap the answer text at about this many tokens.", minimum=50,
            maximum=20000,
        ),
        "as_of": Arg(
            "instant", "Answer as of this instant: only memories stored by then and valid "
            "then, with the content they had then; time expressions count from it. Default: "
            "now (memories valid now; superseded ones are left out).",
        ),
        "include_superseded": Arg(
            "boolean", "Also return memories that are no longer valid (superseded or ended), "
            "marked by valid_until and superseded_by.", default=False,
        ),
        "now": Arg(
            "instant", "Resolve time expressions relative to this instant (default: now); "
            "unlike as_of it does not restrict validity.", public=False,
        ),
        "disabled_stages": Arg(
            "choices", "Pipeline stages to switch off for this search.", default=(),
            max_items=len(STAGES), choices=STAGES, public=False,
        ),
    })  # fmt: skip


SEARCH_ARGS: Mapping[str, Arg] = _declare()


def public_args(args: Mapping[str, Arg] = SEARCH_ARGS) -> dict[str, Arg]:
    """The arguments every door offers (REST, MCP, the UI form)."""
    return {name: arg for name, arg in args.items() if arg.public}


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
        cls, *, namespace: Namespace | str, args: Mapping[str, Arg] = SEARCH_ARGS, **raw: Any
    ) -> SearchRequest:
        """Validate raw arguments against `args`; ValidationFailed names every bad field."""
        unknown = sorted(set(raw) - set(args))
        if unknown:
            raise TypeError(f"search() got unexpected argument(s): {', '.join(unknown)}")
        errors: dict[str, str] = {}
        ns = _namespace(namespace)
        v = {name: _clean(name, arg, raw.get(name), errors) for name, arg in args.items()}
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
        if not query and not (v["tags"] or v["categories"] or file_path or after or before):
            errors.setdefault("query", "A query (or at least one filter) is required.")
        if errors:
            raise ValidationFailed(errors)
        return cls(
            namespace=ns,
            query=query,
            mode=v["mode"],
            after=after,
            before=before,
            time_phrase=parsed.phrase if parsed else "",
            tags=v["tags"],
            categories=v["categories"],
            file_path=file_path,
            quality_boost=v["quality_boost"],
            limit=v["limit"],
            include_debug=v["include_debug"],
            now=now,
            disabled=v["disabled_stages"],
            token_budget=v["token_budget"],
            as_of=v["as_of"],
            include_superseded=v["include_superseded"],
        )


def _clean(name: str, arg: Arg, value: Any, errors: dict[str, str]) -> Any:
    """One argument checked against its declaration; the default when absent."""
    if value is None or (value == "" and arg.kind != "text"):
        return arg.default
    try:
        if arg.kind == "instant":
            return parse_instant(value, field=name)
        return _CHECKS[arg.kind](arg, value)
    except ValidationFailed as exc:
        errors[name] = exc.errors[name][0]
    except ValueError as exc:
        errors[name] = str(exc)
    return arg.default


def _text(arg: Arg, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("Expected text.")
    value = value.strip()
    if arg.max_length is not None and len(value) > arg.max_length:
        raise ValueError(f"At most {arg.max_length} characters.")
    # What PostgreSQL cannot hold as text it cannot search for either (a NUL, a lone surrogate).
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _choice(arg: Arg, value: Any) -> str:
    if value not in arg.choices:
        raise ValueError(f"One of {', '.join(arg.choices)}.")
    return value


def _range_message(arg: Arg, what: str) -> str:
    return f"{what} from {arg.minimum:g} to {arg.maximum:g}."


def _integer(arg: Arg, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(_range_message(arg, "An integer"))
    if not arg.minimum <= value <= arg.maximum:
        raise ValueError(_range_message(arg, "An integer"))
    return value


def _number(arg: Arg, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(_range_message(arg, "A number")) from None
    if isinstance(value, bool) or not arg.minimum <= number <= arg.maximum:
        raise ValueError(_range_message(arg, "A number"))
    return number


def _boolean(arg: Arg, value: Any) -> bool:
    return bool(value)


def _strings(arg: Arg, value: Any) -> tuple[str, ...]:
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


def _choices(arg: Arg, value: Any) -> tuple[str, ...]:
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


def _time_range(time_expr: str | None, now: datetime, errors: dict) -> TimeRange | None:
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


def _namespace(value) -> Namespace:
    if isinstance(value, Namespace):
        return value
    if isinstance(value, str) and value:
        try:
            return Namespace.objects.get(name=value)
        except Namespace.DoesNotExist:
            raise NotFound(f"namespace {value!r} does not exist") from None
    raise ValidationFailed({"namespace": "A namespace (object or name) is required."})
