"""Strict MCP tools whose arguments come from the request models.

A tool parameter typed as a pydantic model (apps.search.params.SearchParams,
apps.memories.fields.MemoryCreate, ...) is spread into the tool's arguments: the client sends
the model's fields side by side with the tool's own parameters, the schema lists them with the
model's bounds and descriptions, and the tool function receives one validated model instance.
`strict_tool` also makes a tool refuse arguments it does not declare, naming them, instead of
dropping them silently.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import BaseModel, ConfigDict, ValidationError, create_model


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
    """A Tool whose arguments model spreads the model-typed parameters and forbids names the
    tool does not declare."""
    tool = StrictTool.from_function(fn, description=plain_description(fn), **kwargs)
    arguments = _spread(tool.fn_metadata.arg_model)
    tool.fn_metadata.arg_model = arguments
    tool.parameters = arguments.model_json_schema(by_alias=True)
    tool.parameters["additionalProperties"] = False
    return tool


def plain_description(fn: Callable[..., Any]) -> str:
    """The docstring as a client shows it: the source's indentation and line breaks inside a
    paragraph become single spaces (a client printed "score,\n    why each ranked"); a blank
    line still parts two paragraphs."""
    paragraphs = re.split(r"\n\s*\n", inspect.getdoc(fn) or "")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def _spread(base: type[ArgModelBase]) -> type[ArgModelBase]:
    fields: dict[str, Any] = {}
    groups: dict[str, type[BaseModel]] = {}
    for name, info in base.model_fields.items():
        model = info.annotation
        if inspect.isclass(model) and issubclass(model, BaseModel):
            groups[name] = model
            fields.update((inner, (f.annotation, f)) for inner, f in model.model_fields.items())
        else:
            fields[name] = (info.annotation, info)

    class Arguments(ArgModelBase):
        model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

        def model_dump_one_level(self) -> dict[str, Any]:
            """The tool's keyword arguments: each spread model gathered back into one
            instance that knows which of its fields were sent."""
            values = super().model_dump_one_level()
            for name, model in groups.items():
                own = {k: values.pop(k) for k in model.model_fields}
                sent = self.model_fields_set & set(own)
                values[name] = model.model_construct(_fields_set=sent, **own)
            return values

    return create_model(base.__name__, __base__=Arguments, **fields)
