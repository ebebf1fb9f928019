"""A memory's writable fields are declared once (apps.memories.fields.MemoryCreate and
MemoryPatch); REST, MCP and the write path's validation agree with it."""

from __future__ import annotations

import pytest

from apps.api.serializers import MemoryCreateIn, MemoryFieldsIn, MemoryUpdateIn
from apps.core.exceptions import ValidationFailed
from apps.mcp.server import build_server
from apps.memories.fields import CREATE_FIELDS, UPDATE_FIELDS
from apps.memories.validation import validate_memory_input


def _tool_params(name: str) -> dict:
    tools = {tool.name: tool for tool in build_server()._tool_manager.list_tools()}
    return tools[name].parameters


def test_rest_and_mcp_accept_exactly_the_declared_fields():
    create = {f.name for f in CREATE_FIELDS}
    update = {f.name for f in UPDATE_FIELDS}
    assert set(MemoryFieldsIn().fields) == create
    assert set(MemoryCreateIn().fields) == create | {"namespace", "on_duplicate"}
    # confirm_constitutional: a confirmation for the rules of a namespace, not a field
    assert set(MemoryUpdateIn().fields) == update | {"archived", "confirm_constitutional"}
    assert set(_tool_params("remember")["properties"]) == create | {"namespace", "on_duplicate"}
    assert set(_tool_params("update_memory")["properties"]) == update | {
        "memory_id",
        "expected_version",
        "confirm_constitutional",
    }
    item = _tool_params("remember_batch")["$defs"]["MemoryCreate"]
    assert set(item["properties"]) == create


def test_limits_and_choices_are_the_same_everywhere():
    remember = _tool_params("remember")["properties"]
    rest = MemoryFieldsIn().fields
    for spec in CREATE_FIELDS:
        if spec.kind == "text":
            assert rest[spec.name].max_length == spec.max_length
            mcp = next(a for a in remember[spec.name].get("anyOf", [remember[spec.name]]))
            assert mcp["maxLength"] == spec.max_length
        if spec.kind == "choice":
            assert list(rest[spec.name].choices) == list(spec.choices)
            options = remember[spec.name]["anyOf"][0]["enum"]
            assert options == list(spec.choices)
        if spec.kind == "text":
            with pytest.raises(ValidationFailed) as caught:
                validate_memory_input({"content": "x", spec.name: "y" * (spec.max_length + 1)})
            assert spec.name in caught.value.errors


def test_unknown_fields_are_named_by_every_door():
    with pytest.raises(ValidationFailed) as caught:
        validate_memory_input({"content": "x", "colour": "red"})
    assert "colour" in caught.value.errors
    serializer = MemoryCreateIn(data={"content": "x", "colour": "red"})
    assert not serializer.is_valid()
    assert "colour" in serializer.errors
    assert _tool_params("remember")["additionalProperties"] is False
