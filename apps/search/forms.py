"""The search form of the web UI, derived from apps.search.params.SEARCH_ARGS (the one
declaration of the search request): the same bounds, choices and defaults as REST and MCP.

`search_form_fields()` gives one Django form field per public argument; `SearchArgsForm` is a
form with all of them whose `search_arguments()` are ready for search(). The service still
validates everything (ValidationFailed names the field, which the UI puts next to it).
"""

from __future__ import annotations

from collections.abc import Mapping

from django import forms

from .params import SEARCH_ARGS, Arg, public_args


def search_form_field(arg: Arg) -> forms.Field:
    common: dict = {"required": False, "help_text": arg.help}
    if arg.default not in (None, ()):
        common["initial"] = arg.default
    if arg.kind == "text":
        return forms.CharField(max_length=arg.max_length, **common)
    if arg.kind == "choice":
        return forms.ChoiceField(choices=[(c, c) for c in arg.choices], **common)
    if arg.kind == "integer":
        return forms.IntegerField(min_value=arg.minimum, max_value=arg.maximum, **common)
    if arg.kind == "number":
        return forms.FloatField(min_value=arg.minimum, max_value=arg.maximum, **common)
    if arg.kind == "boolean":
        return forms.BooleanField(**common)
    if arg.kind == "instant":
        return forms.CharField(max_length=64, **common)  # parsed by apps.core.dates
    if arg.kind == "strings":
        return forms.CharField(**common)  # comma separated; the service splits and bounds it
    if arg.kind == "choices":
        choices = [(c, c) for c in arg.choices]
        return forms.MultipleChoiceField(
            choices=choices, widget=forms.CheckboxSelectMultiple, **common
        )
    raise ValueError(f"no form field for {arg.kind!r}")


def search_form_fields(args: Mapping[str, Arg] = SEARCH_ARGS) -> dict[str, forms.Field]:
    return {name: search_form_field(arg) for name, arg in public_args(args).items()}


def search_form_class(args: Mapping[str, Arg] = SEARCH_ARGS) -> type[SearchArgsBase]:
    """A form class with one field per public search argument of `args`."""
    return type("SearchArgsForm", (SearchArgsBase,), search_form_fields(args))


class SearchArgsBase(forms.Form):
    def search_arguments(self) -> dict:
        """The cleaned values that were given, as search() keyword arguments (absent ones
        take the declared default in the service)."""
        return {k: v for k, v in self.cleaned_data.items() if v not in (None, "", [])}


SearchArgsForm = search_form_class()
