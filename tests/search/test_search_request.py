"""The search request is declared once (apps.search.params.SearchParams): the service, the REST
serializer, the MCP tool schemas (memory_search and the old names) and the UI's form all take
it. Changing a bound, a choice or a default in that one place moves every door."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.mcpserver import Context
from pydantic import Field, create_model
from pydantic import ValidationError as PydanticError

from apps.api.fields import serializer_for
from apps.api.serializers import SearchIn
from apps.core.exceptions import ValidationFailed
from apps.core.schema import Choice, Integer, spec_of
from apps.mcp.arguments import strict_tool
from apps.mcp.legacy import LEGACY_TOOLS
from apps.mcp.tools import memory_search
from apps.search.params import SearchArguments, SearchParams, SearchRequest

pytestmark = pytest.mark.django_db

LIMIT = spec_of(SearchParams.model_fields["limit"])
QUERY_MAX = spec_of(SearchParams.model_fields["query"]).max_length


def _changed(name: str, annotation: Any, default: Any) -> type[SearchArguments]:
    """The declaration with one argument changed: the one edit a maintainer would make."""
    field = (annotation, Field(default, description="changed"))
    return create_model("Changed", __base__=SearchArguments, **{name: field})


def _doors(model: type[SearchParams]):
    """Each door's validator built from `model`: the REST serializer and the MCP arguments."""
    serializer = serializer_for(model, "SearchIn", defaults=True)

    async def tool(ctx: Context, search: SearchParams) -> None:  # pragma: no cover
        raise AssertionError("only the schema is used")

    tool.__annotations__["search"] = model  # the changed declaration, not the module's

    arguments = strict_tool(tool).fn_metadata.arg_model

    def rest(data):
        s = serializer(data=data)
        return s.validated_data if s.is_valid() else s.errors

    def mcp(data):
        try:
            return arguments.model_validate(data).model_dump()
        except PydanticError as exc:
            return {str(e["loc"][0]): e["msg"] for e in exc.errors()}

    return {"rest": rest, "mcp": mcp}


@pytest.mark.parametrize("door", ["rest", "mcp"])
def test_a_changed_bound_moves_every_door(door, namespace):
    model = _changed("limit", Integer(1, 7), 10)
    validate = _doors(model)[door]
    assert "limit" in validate({"query": "x", "limit": 8})
    assert validate({"query": "x", "limit": 7})["limit"] == 7
    with pytest.raises(ValidationFailed) as exc:
        SearchRequest.build(namespace=namespace, model=model, limit=8)
    assert "limit" in exc.value.errors


@pytest.mark.parametrize("door", ["rest", "mcp"])
def test_a_changed_default_moves_every_door(door, namespace):
    model = _changed("limit", Integer(1, 100), 3)
    assert _doors(model)[door]({"query": "x"})["limit"] == 3
    assert SearchRequest.build(namespace=namespace, model=model, query="x").limit == 3


@pytest.mark.parametrize("door", ["rest", "mcp"])
def test_a_changed_choice_moves_every_door(door, namespace):
    model = _changed("mode", Choice(("hybrid", "semantic")), "hybrid")
    validate = _doors(model)[door]
    assert "mode" in validate({"query": "x", "mode": "deep"})
    assert validate({"query": "x", "mode": "semantic"})["mode"] == "semantic"
    with pytest.raises(ValidationFailed) as exc:
        SearchRequest.build(namespace=namespace, model=model, query="x", mode="deep")
    assert exc.value.errors == {"mode": ["One of hybrid, semantic."]}


def test_the_real_doors_are_built_from_the_declaration():
    rest = SearchIn().fields
    mcp = strict_tool(memory_search).parameters["properties"]
    for name, info in SearchParams.model_fields.items():
        spec = spec_of(info)
        assert name in rest and name in mcp, name
        if spec.kind in ("integer", "number"):
            assert (rest[name].min_value, rest[name].max_value) == (spec.minimum, spec.maximum)
            assert (mcp[name].get("minimum"), mcp[name].get("maximum")) in {
                (spec.minimum, spec.maximum),
                (None, None),  # optional ones carry the bounds inside anyOf
            }
    assert "now" not in rest and "disabled_stages" not in mcp  # internal arguments
    assert mcp["limit"]["maximum"] == LIMIT.maximum
    assert mcp["mode"]["enum"] == list(spec_of(SearchParams.model_fields["mode"]).choices)
    assert rest["query"].max_length == mcp["query"]["maxLength"] == QUERY_MAX


def test_the_old_tool_names_share_the_bounds():
    for fn in LEGACY_TOOLS:
        props = strict_tool(fn).parameters["properties"]
        if "n_results" in props:
            assert props["n_results"]["maximum"] == LIMIT.maximum
            assert props["n_results"]["minimum"] == LIMIT.minimum
        for text in ("query", "content"):
            if text in props and "maxLength" in props[text]:
                assert props[text]["maxLength"] == QUERY_MAX


@pytest.mark.parametrize("budget", [49, 20001])
def test_token_budget_has_one_bound_everywhere(budget, namespace):
    for validate in _doors(SearchParams).values():
        assert "token_budget" in validate({"query": "x", "token_budget": budget})
    with pytest.raises(ValidationFailed) as exc:
        SearchRequest.build(namespace=namespace, query="x", token_budget=budget)
    assert "token_budget" in exc.value.errors
    assert SearchRequest.build(namespace=namespace, query="x", token_budget=50).token_budget == 50


def test_unknown_arguments_are_a_programming_error(namespace):
    with pytest.raises(TypeError, match="colour"):
        SearchRequest.build(namespace=namespace, query="x", colour="red")


def test_service_validation_names_each_bad_field(namespace):
    with pytest.raises(ValidationFailed) as exc:
        SearchRequest.build(
            namespace=namespace,
            query="x" * (QUERY_MAX + 1),
            tags=[f"t{i}" for i in range(51)],
            categories=["nope"],
            disabled_stages=["nope"],
            after="yesterday-ish",
        )
    assert set(exc.value.errors) == {"query", "tags", "categories", "disabled_stages", "after"}


def test_service_defaults_are_the_declared_ones(namespace):
    request = SearchRequest.build(namespace=namespace, tags=["x"])
    assert (request.query, request.mode, request.limit, request.quality_boost) == (
        "",
        "hybrid",
        10,
        0.0,
    )
    assert (request.categories, request.disabled, request.token_budget) == ((), (), None)


@pytest.mark.parametrize(
    ("field", "value"),
    [("query", "deploy\x00now"), ("file_path", "src/\ud800.py"), ("tags", ["ok", "bad\x00"])],
)
def test_text_postgres_cannot_hold_is_refused_naming_the_field(namespace, field, value):
    arguments = {"query": "deploy", field: value}
    with pytest.raises(ValidationFailed) as refused:
        SearchRequest.build(namespace=namespace, **arguments)
    assert field in refused.value.errors
