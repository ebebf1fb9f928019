"""MCP search arguments derived from apps.search.params.SEARCH_ARGS, the one declaration of
the search request: memory_search's signature and the old tool names' annotations come from
it, so a bound, choice or default changes there and the tool schemas follow."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from apps.search.params import SEARCH_ARGS, Arg, public_args

INSTANT_HELP = (
    " ISO 8601 date or date-time, e.g. 2024-03-01 or 2024-03-01T09:30:00Z (no zone means UTC)."
)


def search_arg(arg: Arg, *, required: bool = False, **field: Any) -> Any:
    """The pydantic annotation of one search argument; `field` overrides the description or
    adds constraints for a door (e.g. min_length=1 for a query the old tools require)."""
    kind, constraints = _base_type(arg)
    description = arg.help + (INSTANT_HELP if arg.kind == "instant" else "")
    constraints = {"description": description, **constraints, **field}
    if required or arg.default is not None and arg.kind not in ("strings", "choices"):
        return Annotated[kind, Field(**constraints)]
    return Annotated[kind | None, Field(**constraints)]


def _base_type(arg: Arg) -> tuple[Any, dict[str, Any]]:
    if arg.kind == "text":
        return str, {"max_length": arg.max_length}
    if arg.kind == "choice":
        return Literal[arg.choices], {}
    if arg.kind == "integer":
        return int, {"ge": arg.minimum, "le": arg.maximum}
    if arg.kind == "number":
        return float, {"ge": arg.minimum, "le": arg.maximum}
    if arg.kind == "boolean":
        return bool, {}
    if arg.kind == "instant":
        return str, {"max_length": 64}
    if arg.kind == "strings":
        item = Annotated[str, Field(min_length=1, max_length=arg.max_length)]
        return list[item], {"max_length": arg.max_items}
    if arg.kind == "choices":
        return list[Literal[arg.choices]], {"max_length": arg.max_items}
    raise ValueError(f"no MCP argument for {arg.kind!r}")


def _default(arg: Arg) -> Any:
    if arg.required:
        return inspect.Parameter.empty
    return None if arg.default in (None, ()) else arg.default


def with_search_args(args: Mapping[str, Arg] = SEARCH_ARGS):
    """Give a tool declared as `async def tool(ctx, **search, namespace=None)` one keyword
    parameter per public search argument, before the tool's own optional parameters."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn, eval_str=True)
        own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        declared = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=search_arg(arg),
                default=_default(arg),
            )
            for name, arg in public_args(args).items()
        ]
        leading = [p for p in own if p.default is p.empty]
        trailing = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own if p.default is not p.empty
        ]
        fn.__signature__ = signature.replace(parameters=[*leading, *declared, *trailing])
        return fn

    return decorate
