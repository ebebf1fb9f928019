"""Validation of search() arguments: every bad value raises ValidationFailed naming its field."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from apps.core.dates import parse_instant
from apps.core.exceptions import NotFound, ValidationFailed
from apps.memories.models import Category, Namespace

from .config import search_settings
from .pipeline.timeexpr import TimeOutOfRange, TimeRange, parse_time_expression
from .stages import unknown_stages

MODES = ("hybrid", "semantic", "exact", "deep")


@dataclass(frozen=True)
class SearchRequest:
    namespace: Namespace
    query: str
    mode: str
    after: datetime | None
    before: datetime | None
    time_phrase: str
    tags: tuple[str, ...]
    categories: tuple[str, ...]
    file_path: str
    quality_boost: float
    limit: int
    include_debug: bool
    now: datetime
    disabled: tuple[str, ...]
    token_budget: int | None


def _datetime(value, field: str, errors: dict) -> datetime | None:
    try:
        return parse_instant(value, field=field)
    except ValidationFailed as exc:
        errors[field] = exc.errors[field][0]
        return None


def _time_range(time_expr, now: datetime, errors: dict) -> TimeRange | None:
    if not time_expr:
        return None
    if not isinstance(time_expr, str):
        errors["time_expr"] = "Expected text such as 'last week'."
        return None
    try:
        parsed = parse_time_expression(time_expr, now)
    except TimeOutOfRange as exc:
        errors["time_expr"] = str(exc)
        return None
    if parsed is None:
        errors["time_expr"] = f"Could not understand the time expression {time_expr!r}."
    return parsed


def _strings(value, field: str, errors: dict) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v for v in value.split(",")]
    if not isinstance(value, Iterable) or not all(isinstance(v, str) for v in value):
        errors[field] = "Expected a list of strings."
        return ()
    return tuple(dict.fromkeys(v.strip() for v in value if v.strip()))


def _namespace(value) -> Namespace:
    if isinstance(value, Namespace):
        return value
    if isinstance(value, str) and value:
        try:
            return Namespace.objects.get(name=value)
        except Namespace.DoesNotExist:
            raise NotFound(f"namespace {value!r} does not exist") from None
    raise ValidationFailed({"namespace": "A namespace (object or name) is required."})


def validate(
    *,
    namespace,
    query="",
    mode="hybrid",
    time_expr=None,
    after=None,
    before=None,
    tags=None,
    categories=None,
    file_path=None,
    quality_boost=0.0,
    limit=10,
    include_debug=False,
    as_of=None,
    disabled_stages=(),
    token_budget=None,
) -> SearchRequest:
    errors: dict[str, str] = {}
    ns = _namespace(namespace)
    if query is None:
        query = ""
    if not isinstance(query, str):
        errors["query"] = "Expected text."
        query = ""
    query = query.strip()
    max_chars = search_settings().query_max_chars
    if len(query) > max_chars:
        errors["query"] = f"At most {max_chars} characters."
    if mode is None or mode == "":
        mode = "hybrid"
    if mode not in MODES:
        errors["mode"] = f"One of {', '.join(MODES)}."
    now = _datetime(as_of, "as_of", errors) or timezone.now()
    after_dt = _datetime(after, "after", errors)
    before_dt = _datetime(before, "before", errors)
    parsed = _time_range(time_expr, now, errors)
    phrase = parsed.phrase if parsed else ""
    if parsed and parsed.after and (after_dt is None or parsed.after > after_dt):
        after_dt = parsed.after
    if parsed and parsed.before and (before_dt is None or parsed.before < before_dt):
        before_dt = parsed.before
    if after_dt and before_dt and after_dt >= before_dt and "after" not in errors:
        errors.setdefault("before", "Must be later than 'after'.")
    tag_names = _strings(tags, "tags", errors)
    category_names = _strings(categories, "categories", errors)
    bad = [c for c in category_names if c not in Category.values]
    if bad:
        errors["categories"] = f"Unknown category {bad[0]!r}; one of {', '.join(Category.values)}."
    if file_path is not None and not isinstance(file_path, str):
        errors["file_path"] = "Expected a path."
    try:
        quality = float(quality_boost or 0.0)
        if not 0.0 <= quality <= 1.0:
            raise ValueError
    except (TypeError, ValueError):
        errors["quality_boost"] = "A number from 0 to 1."
        quality = 0.0
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        errors["limit"] = "An integer from 1 to 100."
    budget = token_budget
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int) or budget < 1
    ):
        errors["token_budget"] = "A positive integer."
    stages = tuple(disabled_stages or ())
    if unknown_stages(stages):
        errors["disabled_stages"] = f"Unknown stage(s): {', '.join(unknown_stages(stages))}."
    if not query and not (tag_names or category_names or file_path or after_dt or before_dt):
        errors.setdefault("query", "A query (or at least one filter) is required.")
    if errors:
        raise ValidationFailed(errors)
    return SearchRequest(
        namespace=ns, query=query, mode=mode, after=after_dt, before=before_dt,
        time_phrase=phrase, tags=tag_names, categories=category_names,
        file_path=(file_path or "").strip(), quality_boost=quality, limit=limit,
        include_debug=bool(include_debug), now=now, disabled=stages, token_budget=budget,
    )  # fmt: skip
