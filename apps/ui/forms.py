"""Forms of the UI. They only shape browser input into the arguments of the services; the
services validate (their ValidationFailed errors are put next to the field they name)."""

from __future__ import annotations

from django import forms
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.core.exceptions import ValidationFailed
from apps.memories import provenance
from apps.memories.models import Category, Relation, Tier
from apps.search.params import MODES, SearchParams

CATEGORY_CHOICES = [(c, c) for c in Category.values]
TIER_CHOICES = [(t, t) for t in Tier.values]


def split_list(value: str) -> list[str]:
    return [part.strip() for part in (value or "").replace("\n", ",").split(",") if part.strip()]


def attach_errors(form: forms.Form, exc: ValidationFailed, aliases: dict | None = None) -> None:
    """Show a service's errors next to the fields they name ("tags[2]" goes on "tags")."""
    aliases = aliases or {}
    for name, messages in exc.errors.items():
        base = aliases.get(name, name.split("[")[0].split(".")[0])
        field = base if base in form.fields else None
        for message in messages:
            form.add_error(field, f"{name}: {message}" if field and name != base else message)


DATE = forms.DateInput(attrs={"type": "date"})
# A date and a time of day, so "as of an hour ago" can be asked on the day of a change.
DATE_AND_TIME = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


class SearchForm(forms.Form):
    """The search page: a query box (`q`, short in URLs), the namespace, and the filters of
    apps.search.params.SearchParams. The fields only read the browser's text (a number, a
    list of boxes); search() validates the arguments, and its errors go next to these fields
    (attach_errors), so bounds and choices have one home."""

    q = forms.CharField(required=False, label="Query")
    namespace = forms.ChoiceField(choices=())
    mode = forms.ChoiceField(choices=[(m, m) for m in MODES], required=False, initial="hybrid")
    tags = forms.CharField(required=False, help_text="Comma separated")
    categories = forms.MultipleChoiceField(
        choices=CATEGORY_CHOICES, required=False, widget=forms.CheckboxSelectMultiple
    )
    file_path = forms.CharField(required=False)
    time_expr = forms.CharField(
        required=False, label="Time", help_text="e.g. last week, since March"
    )
    after = forms.CharField(required=False, widget=DATE)
    before = forms.CharField(required=False, widget=DATE)
    quality_boost = forms.FloatField(
        required=False, initial=0.0, widget=forms.NumberInput(attrs={"step": "0.1"})
    )
    limit = forms.IntegerField(required=False, initial=10)
    as_of = forms.CharField(
        required=False, label="As of", help_text="What was true then", widget=DATE_AND_TIME
    )
    include_superseded = forms.BooleanField(
        required=False, label="Include superseded", help_text="Facts that no longer hold, marked"
    )
    # Provenance: who wrote it, with which token or app, through which door.
    person = forms.CharField(required=False, label="Written by")
    credential = forms.CharField(required=False, label="Token or app")
    door = forms.ChoiceField(
        choices=[("", "any door"), *((d, d) for d in provenance.DOORS)], required=False
    )

    def __init__(self, *args, namespaces: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["namespace"].choices = [(n, n) for n in namespaces]
        for name in ("mode", "categories", "file_path", "quality_boost", "limit"):
            self.fields[name].help_text = SearchParams.model_fields[name].description

    def clean_as_of(self) -> str:
        """The picker sends a wall-clock time without a zone ("2026-11-28T14:30"): it means
        the server's time zone, the one the pages show times in (search reads no zone as
        UTC). Any other text goes to search() as it is, which names the field if it is bad."""
        text = self.cleaned_data["as_of"]
        try:
            moment = parse_datetime(text) if "T" in text else None
        except ValueError:
            return text
        if moment is not None and timezone.is_naive(moment):
            return timezone.make_aware(moment).isoformat()
        return text

    def has_search(self) -> bool:
        data = self.cleaned_data
        keys = ("q", "tags", "categories", "file_path", "time_expr", "after", "before")
        keys += ("person", "credential", "door")
        return any(data.get(k) for k in keys)

    def search_arguments(self) -> dict:
        """Keyword arguments for search(): what was given; the service defaults the rest."""
        data = self.cleaned_data
        given = {k: v for k, v in data.items() if v not in (None, "", []) and k != "namespace"}
        given.pop("q", None)
        return {"query": data["q"], **given}


SORT_CHOICES = [
    ("newest", "Newest"),
    ("oldest", "Oldest"),
    ("importance", "Importance"),
    ("pagerank", "PageRank"),
    ("used", "Most used"),
]


class BrowseForm(forms.Form):
    category = forms.ChoiceField(choices=[("", "any category"), *CATEGORY_CHOICES], required=False)
    tier = forms.ChoiceField(choices=[("", "any tier"), *TIER_CHOICES], required=False)
    tag = forms.CharField(required=False)
    archived = forms.ChoiceField(
        choices=[("active", "active"), ("archived", "archived"), ("all", "all")],
        required=False,
    )
    validity = forms.ChoiceField(
        choices=[("current", "current"), ("superseded", "superseded"), ("all", "any validity")],
        required=False,
    )
    file_path = forms.CharField(required=False)
    # Provenance: who wrote it, with which token or app, through which door.
    person = forms.CharField(required=False, max_length=150)
    credential = forms.CharField(required=False, max_length=200)
    door = forms.ChoiceField(
        choices=[("", "any door"), *((d, d) for d in provenance.DOORS)], required=False
    )
    after = forms.DateTimeField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    before = forms.DateTimeField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    sort = forms.ChoiceField(choices=SORT_CHOICES, required=False)
    cursor = forms.CharField(required=False, widget=forms.HiddenInput)


BULK_ACTIONS = [
    ("archive", "Archive"),
    ("restore", "Restore (unarchive)"),
    ("add_tag", "Add tag"),
    ("remove_tag", "Remove tag"),
    ("tier", "Change tier"),
    ("delete", "Delete"),
]


class BulkForm(forms.Form):
    action = forms.ChoiceField(choices=BULK_ACTIONS)
    ids = forms.MultipleChoiceField(choices=(), required=True)
    tag = forms.CharField(required=False)
    tier = forms.ChoiceField(choices=[("", "—"), *TIER_CHOICES], required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Any submitted ids pass here; the view keeps only those in the person's namespace.
        self.fields["ids"].choices = [(i, i) for i in self.data.getlist("ids")] if self.data else []

    def clean(self):
        data = super().clean()
        if data.get("action") in ("add_tag", "remove_tag") and not data.get("tag"):
            self.add_error("tag", "Name the tag.")
        if data.get("action") == "tier" and not data.get("tier"):
            self.add_error("tier", "Choose a tier.")
        return data


class MemoryForm(forms.Form):
    """Create/edit: the writable fields a person edits; the write path validates them."""

    # Limits and choices are the write path's (apps.memories.fields): its errors are shown
    # next to these fields.
    title = forms.CharField(required=False)
    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 12}), required=False)
    category = forms.ChoiceField(choices=CATEGORY_CHOICES, initial=Category.NOTE)
    tags = forms.CharField(required=False, help_text="Comma separated")
    file_path = forms.CharField(required=False)
    source = forms.CharField(required=False)
    # Kept with the memory's provenance when it is created; an edit does not change it.
    source_url = forms.CharField(
        required=False,
        label="Source URL",
        help_text="The page or document this was learnt from (http or https)",
    )
    tier = forms.ChoiceField(choices=TIER_CHOICES, initial=Tier.NORMAL)
    importance = forms.FloatField(initial=0.5, widget=forms.NumberInput(attrs={"step": "0.05"}))
    # The edit form carries the version it was filled from: a save on a memory changed since
    # is shown as a conflict instead of putting the older values back.
    version = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)

    # Parsed by the write path (apps.core.dates), which names the field when a date is bad.
    valid_from = forms.CharField(
        required=False,
        label="Valid from",
        help_text="Empty: from when it is stored",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    valid_until = forms.CharField(
        required=False,
        label="Valid until",
        help_text="Empty: still holds",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    supersedes = forms.CharField(
        required=False,
        label="Replaces (supersedes)",
        help_text="Ids of memories this one replaces, comma separated",
    )
    # Links from this memory (apps.memories.fields.MemoryCreate's caused_by / depends_on); on
    # edit they are added to the links it has.
    caused_by = forms.CharField(
        required=False,
        label="Caused by",
        help_text="Ids of memories that led to this one (why it is so), comma separated",
    )
    depends_on = forms.CharField(
        required=False,
        label="Depends on",
        help_text="Ids of memories this one rests on; it is re-checked when they change",
    )

    def link_fields(self) -> dict[str, list[str]]:
        """The links asked for, by field (only those given)."""
        data = self.cleaned_data
        return {k: split_list(data[k]) for k in ("caused_by", "depends_on") if split_list(data[k])}

    def service_fields(self, *, create: bool = False) -> dict:
        data = self.cleaned_data
        dates = {k: data[k] or None for k in ("valid_from", "valid_until")}
        if create:
            dates = {k: v for k, v in dates.items() if v}
            if split_list(data["supersedes"]):
                dates["supersedes"] = split_list(data["supersedes"])
            dates.update(self.link_fields())
            if data["source_url"]:
                dates["source_url"] = data["source_url"]
        return {
            **dates,
            "title": data["title"],
            "content": data["content"],
            "category": data["category"],
            "tags": split_list(data["tags"]),
            "file_path": data["file_path"],
            "source": data["source"],
            "tier": data["tier"],
            "importance": data["importance"],
        }


class LinkForm(forms.Form):
    target = forms.UUIDField()
    relation = forms.ChoiceField(choices=[(r, r) for r in Relation.values])
    direction = forms.ChoiceField(choices=[("out", "this → other"), ("in", "other → this")])


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, initial="assistant")
    read_only = forms.BooleanField(required=False)
    trusted = forms.BooleanField(
        required=False,
        help_text="Its writes skip review under the policy 'all', and it may approve or reject "
        "what other tokens and apps wrote.",
    )


class GraphForm(forms.Form):
    """Which graph to draw: a memory's neighbourhood (depth 1 or 2) or the whole namespace."""

    memory = forms.UUIDField(required=False)
    depth = forms.TypedChoiceField(
        choices=[(1, "1"), (2, "2")], coerce=int, required=False, empty_value=1
    )
    unlinked = forms.BooleanField(required=False, label="Include unlinked memories")


class GraphLinkForm(forms.Form):
    source = forms.UUIDField()
    target = forms.UUIDField()
    relation = forms.ChoiceField(choices=[(r, r) for r in Relation.values])


PERIOD_CHOICES = [(7, "7 days"), (30, "30 days"), (90, "90 days"), (365, "365 days")]


class AnalyticsForm(forms.Form):
    days = forms.TypedChoiceField(
        choices=PERIOD_CHOICES, coerce=int, required=False, empty_value=30, label="Period"
    )
