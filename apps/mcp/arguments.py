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

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

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


class StrictTool(Tool):
    """A Tool whose argument errors read as REST's do ("items[0].colour: Unknown field."),
    not as pydantic's report with a link to its documentation."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False):
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            problems = "; ".join(f"{_where(e['loc'])}: {_problem(e)}" for e in exc.errors())
            raise ToolError(
                f"Error executing tool {self.name}: Invalid arguments: {problems}"
            ) from exc
        return await super().run(arguments, context, convert_result)


def _where(loc: tuple) -> str:
    """("items", 0, "colour") -> "items[0].colour", REST's name for the same place."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "arguments"


# pydantic's error types, in the words REST (DRF and the write path) uses for the same problem.
_MESSAGES = {
    "extra_forbidden": "Unknown field.",
    "missing": "This field is required.",
    "greater_than_equal": "Ensure this value is greater than or equal to {ge}.",
    "greater_than": "Ensure this value is greater than {gt}.",
    "less_than_equal": "Ensure this value is less than or equal to {le}.",
    "less_than": "Ensure this value is less than {lt}.",
    "string_too_long": "Ensure this field has no more than {max_length} characters.",
    "string_too_short": "This field may not be blank.",
    "too_long": "Ensure this field has no more than {max_length} elements.",
    "too_short": "Ensure this field has at least {min_length} elements.",
    "string_type": "Not a valid string.",
    "int_type": "A valid integer is required.",
    "int_parsing": "A valid integer is required.",
    "int_from_float": "A valid integer is required.",
    "float_type": "A valid number is required.",
    "float_parsing": "A valid number is required.",
    "bool_type": "Must be true or false.",
    "bool_parsing": "Must be true or false.",
    "literal_error": "Must be one of: {expected}.",
    "list_type": "Must be a list.",
    "dict_type": "Must be an object.",
    "model_type": "Must be an object.",
    "model_attributes_type": "Must be an object.",
    "uuid_type": "Must be a valid UUID.",
    "uuid_parsing": "Must be a valid UUID.",
}


def _problem(error: dict) -> str:
    template = _MESSAGES.get(error["type"])
    if template is None:
        return error["msg"].rstrip(".") + "."
    try:
        return template.format(**error.get("ctx", {}))
    except (KeyError, IndexError):
        return error["msg"].rstrip(".") + "."


def strict_tool(fn: Callable[..., Any], **kwargs: Any) -> Tool:
    """A Tool whose arguments model forbids names the tool does not declare."""
    tool = StrictTool.from_function(fn, **kwargs)
    base = tool.fn_metadata.arg_model
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    tool.fn_metadata.arg_model = types.new_class(
        base.__name__, (base,), {}, lambda ns: ns.update(model_config=config)
    )
    tool.parameters["additionalProperties"] = False
    return tool
