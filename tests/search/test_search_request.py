"""The search request is declared once (apps.search.params.SEARCH_ARGS): the service, the REST
serializer, the MCP tool schemas (memory_search and the old names) and the UI's form are all
derived from it. Changing a bound, a choice or a default in that one place moves every door."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver import Context
from pydantic import ValidationError as PydanticError

from apps.api.search_fields import search_serializer
from apps.api.serializers import SearchIn
from apps.core.exceptions import ValidationFailed
from apps.mcp.arguments import strict_tool
from apps.mcp.legacy import LEGACY_TOOLS
from apps.mcp.search_args import with_search_args
from apps.mcp.tools import memory_search
from apps.search.forms import SearchArgsForm, search_form_class
from apps.search.params import SEARCH_ARGS, SearchRequest, public_args

pytestmark = pytest.mark.django_db


def _changed(name: str, **changes) -> dict:
    """The declaration with one argument changed: the one edit a maintainer would make."""
    return {**SEARCH_ARGS, name: SEARCH_ARGS[name].but(**changes)}


def _mcp_tool(args):
    @with_search_args(args)
    async def tool(ctx: Context, namespace: str | None = None, **search):  # pragma: no cover
        raise AssertionError("only the schema is used")

    return strict_tool(tool)


def _doors(args):
    """Each door's validator built from `args`: REST serializer, MCP arguments, UI form."""
    serializer = search_serializer(args)
    tool = _mcp_tool(args)
    form = search_form_class(args)

    def rest(data):
        s = serializer(data=data)
        return s.validated_data if s.is_valid() else s.errors

    def mcp(data):
        try:
            return tool.fn_metadata.arg_model.model_validate(data).model_dump()
        except PydanticError as exc:
            return {str(e["loc"][0]): e["msg"] for e in exc.errors()}

    def ui(data):
        f = form(data=data)
        return f.cleaned_data if f.is_valid() else f.errors

    return {"rest": rest, "mcp": mcp, "ui": ui}


@pytest.mark.parametrize("door", ["rest", "mcp", "ui"])
def test_a_changed_bound_moves_every_door(door, namespace):
    validate = _doors(_changed("limit", maximum=7))[door]
    assert "limit" in validate({"query": "x", "limit": 8})
    assert validate({"query": "x", "limit": 7})["limit"] == 7
    with pytest.raises(ValidationFailed) as exc:
        SearchRequest.build(namespace=namespace, args=_changed("limit", maximum=7), limit=8)
    assert "limit" in exc.value.errors


@pytest.mark.parametrize("door", ["rest", "mcp"])
def test_a_changed_default_moves_every_door(door, namespace):
    validate = _doors(_changed("limit", default=3))[door]
    assert validate({"query": "x"})["limit"] == 3
    assert search_form_class(_changed("limit", default=3))().fields["limit"].initial == 3
    args = _changed("limit", default=3)
    assert SearchRequest.build(namespace=namespace, args=args, query="x").limit == 3


@pytest.mark.parametrize("door", ["rest", "mcp", "ui"])
def test_a_changed_choice_moves_every_door(door):
    validate = _doors(_changed("mode", choices=("hybrid", "semantic")))[door]
    assert "mode" in validate({"query": "x", "mode": "deep"})
    assert validate({"query": "x", "mode": "semantic"})["mode"] == "semantic"


def test_the_real_doors_are_built_from_the_declaration():
    rest = SearchIn().fields
    mcp = strict_tool(memory_search).parameters["properties"]
    form = SearchArgsForm().fields
    for name, arg in public_args().items():
        assert name in rest and name in mcp and name in form, name
        if arg.kind in ("integer", "number"):
            assert (rest[name].min_value, rest[name].max_value) == (arg.minimum, arg.maximum)
            assert (form[name].min_value, form[name].max_value) == (arg.minimum, arg.maximum)
            assert (mcp[name].get("minimum"), mcp[name].get("maximum")) in {
                (arg.minimum, arg.maximum),
                (None, None),  # optional ones carry the bounds inside anyOf
            }
    assert "now" not in rest and "disabled_stages" not in mcp  # internal arguments
    assert mcp["limit"]["maximum"] == SEARCH_ARGS["limit"].maximum
    assert mcp["mode"]["enum"] == list(SEARCH_ARGS["mode"].choices)
    assert rest["query"].max_length == mcp["query"]["maxLength"] == SEARCH_ARGS["query"].max_length


def test_the_old_tool_names_share_the_bounds():
    for fn in LEGACY_TOOLS:
        props = strict_tool(fn).parameters["properties"]
        if "n_results" in props:
            assert props["n_results"]["maximum"] == SEARCH_ARGS["limit"].maximum
            assert props["n_results"]["minimum"] == SEARCH_ARGS["limit"].minimum
        for text in ("query", "content"):
            if text in props and "maxLength" in props[text]:
                assert props[text]["maxLength"] == SEARCH_ARGS["query"].max_length


@pytest.mark.parametrize("budget", [49, 20001])
def test_token_budget_has_one_bound_everywhere(budget, namespace):
    for validate in _doors(SEARCH_ARGS).values():
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
            query="x" * (SEARCH_ARGS["query"].max_length + 1),
            tags=["ok"] * 0 + [f"t{i}" for i in range(51)],
            categories=["nope"],
            disabled_stages=["nope"],
            after="yesterday-ish",
        )
    assert set(exc.value.errors) == {"query", "tags", "categories", "disabled_stages", "after"}


@pytest.mark.parametrize(
    ("field", "value"),
    [("query", "deploy\x00now"), ("file_path", "src/\ud800.py"), ("tags", ["ok", "bad\x00"])],
)
def test_text_postgres_cannot_hold_is_refused_naming_the_field(namespace, field, value):
    arguments = {"query": "deploy", field: value}
    with pytest.raises(ValidationFailed) as refused:
        SearchRequest.build(namespace=namespace, **arguments)
    assert field in refused.value.errors
