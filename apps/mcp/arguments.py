"""MCP tool arguments derived from the shared memory field declarations, and strict tools.

`memory_arg` turns one apps.memories.fields declaration into the pydantic annotation a tool
parameter carries; `with_memory_fields` adds one keyword parameter per declared field to a
tool's signature, so remember, remember_batch and update_memory accept exactly what the write
path validates. `strict_tool` makes a tool refuse arguments it does not declare, naming them,
instead of dropping them silently.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.tools import Tool
from pydantic import BaseModel, ConfigDict, Field, create_model

from apps.memories.fields import MemoryField


def memory_arg(spec: MemoryField, *, partial: bool = False) -> Any:
    """The annotation of one memory field as a tool argument; optional ones accept null."""
    kind, constraints = _base_type(spec)
    if spec.required and not partial:
        return Annotated[kind, Field(description=spec.description, **constraints)]
    return Annotated[kind | None, Field(description=spec.description, **constraints)]


def _base_type(spec: MemoryField) -> tuple[Any, dict[str, Any]]:
    if spec.kind == "text":
        min_length = 1 if spec.required else None
        return str, {"max_length": spec.max_length, "min_length": min_length}
    if spec.kind in ("strings", "tags"):
        item_min = 1 if spec.kind == "tags" else None
        item = Annotated[str, Field(min_length=item_min, max_length=spec.max_length)]
        return list[item], {"max_length": spec.max_items}
    if spec.kind == "choice":
        return Literal[spec.choices], {}
    if spec.kind == "number":
        return float, {"ge": spec.minimum, "le": spec.maximum}
    if spec.kind == "json":
        return dict[str, Any], {}
    if spec.kind == "instant":
        return str, {"max_length": 64}
    raise ValueError(f"no MCP argument for {spec.kind!r}")


def _default(spec: MemoryField, partial: bool) -> Any:
    if spec.required and not partial:
        return inspect.Parameter.empty
    if partial or spec.default in (None, ()):
        return None
    return spec.default


def with_memory_fields(specs: tuple[MemoryField, ...], *, partial: bool = False):
    """Give a tool declared as `async def tool(ctx, ..., **fields)` one keyword parameter per
    memory field (before the tool's own optional parameters, as the schema lists them)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn, eval_str=True)
        own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        declared = [
            inspect.Parameter(
                spec.name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=memory_arg(spec, partial=partial),
                default=_default(spec, partial),
            )
            for spec in specs
        ]
        leading = [p for p in own if p.default is p.empty]
        trailing = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own if p.default is not p.empty
        ]
        fn.__signature__ = signature.replace(parameters=[*leading, *declared, *trailing])
        return fn

    return decorate


def memory_item_model(name: str, specs: tuple[MemoryField, ...]) -> type[BaseModel]:
    """A pydantic model of one memory (remember_batch's items), refusing unknown keys."""
    fields = {
        spec.name: (memory_arg(spec), ... if spec.required else _default(spec, False))
        for spec in specs
    }
    return create_model(name, __config__=ConfigDict(extra="forbid"), **fields)


def strict_tool(fn: Callable[..., Any], **kwargs: Any) -> Tool:
    """A Tool whose arguments model forbids names the tool does not declare."""
    tool = Tool.from_function(fn, **kwargs)
    base = tool.fn_metadata.arg_model
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    tool.fn_metadata.arg_model = types.new_class(
        base.__name__, (base,), {}, lambda ns: ns.update(model_config=config)
    )
    tool.parameters["additionalProperties"] = False
    return tool
