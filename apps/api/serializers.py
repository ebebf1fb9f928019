"""Small input and output serializers, one pair per operation. Validation here mirrors the
services' limits so the OpenAPI schema states them; the services still check everything."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.memories import provenance
from apps.memories.fields import MemoryCreate, MemoryPatch
from apps.memories.models import (
    Category,
    CausalEdge,
    Memory,
    Relation,
    ReviewPolicy,
    SecretsPolicy,
)
from apps.search.params import SearchParams

from .fields import InstantField, StrictSerializer, serializer_for

BATCH_MAX = settings.MEMORY_BATCH_MAX_ITEMS
ON_DUPLICATE = ["report", "skip", "supersede"]


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text='Messages per field path, e.g. {"items[3].content": ["This field is required."]}',
    )


def _namespace_field():
    return serializers.RegexField(
        r"^[a-z0-9][a-z0-9_-]{0,99}$",
        required=False,
        max_length=100,
        help_text="Namespace name. Optional when the token is scoped to one namespace.",
    )


# --- memories ----------------------------------------------------------------------------------


# A memory's fields come from apps.memories.fields (MemoryCreate, MemoryPatch).
MemoryFieldsIn = serializer_for(MemoryCreate, "MemoryFieldsIn")


class MemoryCreateIn(MemoryFieldsIn):
    namespace = _namespace_field()
    on_duplicate = serializers.ChoiceField(choices=ON_DUPLICATE, default="report")


class MemoryBatchIn(StrictSerializer):
    namespace = _namespace_field()
    on_duplicate = serializers.ChoiceField(choices=ON_DUPLICATE, default="report")
    background = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Write in the background and answer 202 with a job to poll. Unset: only "
        f"batches of more than {settings.MEMORY_BATCH_INLINE_MAX} items (MEMORY_BATCH_INLINE_MAX).",
    )
    items = MemoryFieldsIn(
        many=True,
        min_length=1,
        max_length=BATCH_MAX,
        help_text=f"At most {BATCH_MAX} memories and {settings.MEMORY_BATCH_MAX_CHARS} "
        "characters of content and title in all (MEMORY_BATCH_MAX_CHARS).",
    )


CONFIRM_CONSTITUTIONAL_HELP = (
    "Required (true) to change, archive, delete or supersede a constitutional memory, and "
    "only a token an owner marked trusted may."
)
MemoryUpdateIn = serializer_for(
    MemoryPatch,
    "MemoryUpdateIn",
    archived=serializers.BooleanField(required=False),
    confirm_constitutional=serializers.BooleanField(
        required=False, help_text=CONFIRM_CONSTITUTIONAL_HELP
    ),
)


class MemoryDeleteIn(serializers.Serializer):
    confirm_constitutional = serializers.BooleanField(
        required=False, default=False, help_text=CONFIRM_CONSTITUTIONAL_HELP
    )


class MemoryFilterIn(serializers.Serializer):
    namespace = _namespace_field()
    tags = serializers.CharField(
        required=False, max_length=1000, help_text="Comma-separated; memories with any of them."
    )
    category = serializers.ChoiceField(choices=Category.choices, required=False)
    file_path = serializers.CharField(required=False, max_length=1000)
    after = InstantField(required=False)
    before = InstantField(required=False)
    archived = serializers.BooleanField(
        required=False, default=False, help_text="List archived memories instead."
    )
    person = serializers.CharField(
        required=False, max_length=150, help_text="Only memories written by this person."
    )
    credential = serializers.CharField(
        required=False,
        max_length=200,
        help_text="Only memories written with this API token or OAuth app (its name).",
    )
    door = serializers.ChoiceField(
        choices=list(provenance.DOORS),
        required=False,
        help_text="Only memories written through this door.",
    )


class RecheckMarkOut(serializers.Serializer):
    basis = serializers.UUIDField(source="basis_id", help_text="What changed.")
    basis_title = serializers.CharField(allow_blank=True)
    reason = serializers.ChoiceField(choices=["superseded", "deleted", "edited"])
    marked_at = serializers.DateTimeField(help_text="When it changed.")
    depth = serializers.IntegerField(help_text="Links between this memory and what changed.")


class CredentialOut(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(provenance.CREDENTIAL_KINDS))
    name = serializers.CharField(help_text="The API token's or the OAuth app's name.")
    client_id = serializers.CharField(required=False, help_text="The OAuth app's client id.")


class ImportOut(serializers.Serializer):
    file = serializers.CharField(allow_blank=True)
    format = serializers.CharField(allow_blank=True)


class ImportedOut(ImportOut):
    at = serializers.CharField(help_text="When the import ran.")
    door = serializers.CharField(help_text="The door the file came through.")


class ProvenanceOut(serializers.Serializer):
    """Where a memory came from, recorded when it was written and kept through edits, exports
    and imports (null on memories written before it was recorded)."""

    door = serializers.ChoiceField(choices=list(provenance.DOORS))
    person = serializers.CharField(allow_null=True, help_text="Who wrote it (a username).")
    credential = CredentialOut(allow_null=True, help_text="The API token or OAuth app used.")
    client = serializers.CharField(
        allow_null=True, help_text="The MCP client's own name and version (its clientInfo)."
    )
    source_url = serializers.CharField(allow_null=True, help_text="The page it was learnt from.")
    imported = ImportedOut(
        allow_null=True, help_text="The import that copied it here, if it came from an export."
    )
    earlier_imports = ImportedOut(many=True, required=False)
    written_at = serializers.CharField(allow_null=True, help_text="When it was written.")

    def get_fields(self):
        fields = super().get_fields()
        # "import" is a Python keyword: declared here rather than as an attribute.
        fields["import"] = ImportOut(allow_null=True, help_text="The file an import read.")
        return fields


class MemoryOut(serializers.ModelSerializer):
    namespace = serializers.SlugRelatedField(slug_field="name", read_only=True)
    valid_from = serializers.DateTimeField(
        source="effective_valid_from", read_only=True, help_text="Since when the fact holds."
    )
    valid_until = serializers.DateTimeField(
        read_only=True, allow_null=True, help_text="When it stopped (superseded), or null."
    )
    tags = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)
    needs_recheck = RecheckMarkOut(
        source="recheck_marks",
        many=True,
        read_only=True,
        help_text="Why this memory waits for re-check: what it rests on that changed (empty "
        "when nothing did, or once confirmed).",
    )
    provenance = serializers.SerializerMethodField()

    @extend_schema_field(ProvenanceOut(allow_null=True))
    def get_provenance(self, memory: Memory) -> dict | None:
        return provenance.of_memory(memory)

    class Meta:
        model = Memory
        fields = [
            "id",
            "namespace",
            "external_id",
            "title",
            "content",
            "category",
            "tags",
            "file_path",
            "source",
            "trigger_phrases",
            "tier",
            "importance",
            "pagerank_score",
            "access_count",
            "archived",
            "metadata",
            "created_at",
            "updated_at",
            "version",
            "valid_from",
            "valid_until",
            "needs_recheck",
            "review",
            "review_reason",
            "reviewed_by",
            "risk",
            "provenance",
        ]
        read_only_fields = fields


class NearDuplicateOut(serializers.Serializer):
    id = serializers.UUIDField()
    similarity = serializers.FloatField()


class PossibleUpdateOut(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField()
    why = serializers.CharField(
        help_text="Why this stored memory looks replaced by the new one. Nothing is superseded "
        "until confirmed: send supersedes=[id] or decide in the conflicts queue."
    )


class PossibleContradictionOut(PossibleUpdateOut):
    why = serializers.CharField(
        help_text="Why this stored memory reads as negated by the new one (the same claim, "
        "one side says not). Neither replaces the other: a person decides which holds in the "
        "conflicts queue."
    )


class ReplacedOut(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField(allow_blank=True)
    content = serializers.CharField()
    valid_from = serializers.DateTimeField()
    valid_until = serializers.DateTimeField(allow_null=True)


class BasisChangedOut(serializers.Serializer):
    basis = serializers.UUIDField(help_text="The memory this one rests on that changed.")
    basis_title = serializers.CharField(allow_blank=True)
    reason = serializers.ChoiceField(choices=["superseded", "deleted", "edited"])
    on = serializers.DateTimeField(help_text="When it changed.")


class WriteResultOut(serializers.Serializer):
    memory = MemoryOut()
    created = serializers.BooleanField(help_text="False when identical content already existed.")
    duplicate_of = serializers.UUIDField(allow_null=True)
    near_duplicates = NearDuplicateOut(many=True)
    chunks = serializers.ListField(child=serializers.UUIDField())
    inferred_tags = serializers.ListField(child=serializers.CharField())
    supersedes = serializers.ListField(
        child=serializers.UUIDField(), help_text="Memories whose validity this one ended."
    )
    caused_by = serializers.ListField(
        child=serializers.UUIDField(), help_text="Memories now linked to it by `caused`."
    )
    depends_on = serializers.ListField(
        child=serializers.UUIDField(), help_text="Memories it now links to by `depends_on`."
    )
    possible_updates = PossibleUpdateOut(many=True)
    possible_contradictions = PossibleContradictionOut(many=True)
    review = serializers.CharField(
        help_text='"pending": stored, but found by nothing until an editor approves it.'
    )
    review_reason = serializers.CharField(allow_blank=True, help_text="Why it waits, if it does.")
    redacted = serializers.ListField(
        child=serializers.CharField(),
        help_text="Kinds of credential replaced by [redacted: KIND] (secrets policy redact).",
    )


class BatchResultOut(serializers.Serializer):
    created = serializers.IntegerField()
    already_stored = serializers.IntegerField(
        help_text="Items that repeat a stored memory (same text and, where given, time and id) "
        "or an earlier item: their result is that memory, not a new one."
    )
    results = WriteResultOut(many=True)


class BatchJobOut(serializers.Serializer):
    id = serializers.UUIDField()
    namespace = serializers.CharField()
    state = serializers.ChoiceField(
        choices=["queued", "running", "done", "failed"],
        help_text="queued, running (done counts the items encoded), then done (every item "
        "stored, in one transaction) or failed (nothing stored; errors name the items).",
    )
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    rate_per_s = serializers.FloatField(allow_null=True, help_text="Items a second so far.")
    created = serializers.IntegerField()
    already_stored = serializers.IntegerField()
    queued_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    errors = serializers.DictField(child=serializers.JSONField())
    results = serializers.ListField(
        child=serializers.DictField(),
        allow_null=True,
        help_text="Once done, one per item in order: id, created, duplicate_of, "
        "near_duplicates, chunks, inferred_tags, valid_from, valid_until, supersedes, "
        "caused_by, depends_on, possible_updates, possible_contradictions.",
    )
    status_url = serializers.CharField(help_text="Where to poll this job.")


# --- search ------------------------------------------------------------------------------------


# Every search parameter comes from apps.search.params.SearchParams; namespace is REST's own.
SearchIn = serializer_for(SearchParams, "SearchIn", defaults=True, namespace=_namespace_field())


class RiskOut(serializers.Serializer):
    kind = serializers.CharField()
    reason = serializers.CharField()
    start = serializers.IntegerField()
    end = serializers.IntegerField()


class SearchHitOut(serializers.Serializer):
    id = serializers.UUIDField()
    content = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    category = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    file_path = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    valid_from = serializers.DateTimeField()
    valid_until = serializers.DateTimeField(allow_null=True)
    current = serializers.BooleanField(help_text="Valid at the search's time (now, or as_of).")
    superseded_by = serializers.UUIDField(allow_null=True)
    supersedes = ReplacedOut(many=True, help_text="What this memory replaced, and when.")
    basis_changed = BasisChangedOut(
        allow_null=True,
        help_text="Set while the memory waits for re-check: something it rests on "
        "(depends_on, or what caused it) was superseded, deleted or edited.",
    )
    provenance = ProvenanceOut(allow_null=True)
    review = serializers.CharField(help_text='Always "approved": waiting memories are not found.')
    reviewed_by = serializers.CharField(
        allow_blank=True, help_text="Who approved it, when the review policy held it."
    )
    risk = RiskOut(many=True, help_text="What the risk check flagged in its text at write.")
    score = serializers.FloatField()
    why = serializers.DictField(help_text="Per-strategy ranks and the boosts that applied.")
    flags = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text='e.g. "contradiction:<other id>"',
    )


class SearchFlagsOut(serializers.Serializer):
    evidence_gap = serializers.BooleanField()
    fallback_retry = serializers.BooleanField()
    contradictions = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Pairs of result ids that contradict each other.",
    )


class PathStepOut(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField(allow_blank=True)
    relation = serializers.CharField(
        allow_null=True, help_text="The stored link to the memory before (null for the first)."
    )
    reads = serializers.CharField(
        allow_null=True,
        help_text='How that link reads along the chain: "caused by", "depends on", "replaces" '
        '(why) or "caused", "basis of", "replaced by" (what followed).',
    )


class SearchOut(serializers.Serializer):
    memories = SearchHitOut(many=True)
    total = serializers.IntegerField()
    query = serializers.CharField(allow_blank=True)
    mode = serializers.CharField()
    confidence = serializers.FloatField(
        allow_null=True,
        help_text="0..1: how likely the results hold the answer; flags.evidence_gap is set "
        "below 0.5. Null for a search without query text.",
    )
    flags = SearchFlagsOut()
    path = PathStepOut(
        many=True,
        help_text="For a why-question (or what-followed question): the causal chain from the "
        "best match, each memory with the link from the one before; empty when none exists.",
    )
    debug = serializers.DictField(required=False)
    query_log_id = serializers.IntegerField(allow_null=True)
    text = serializers.CharField(help_text="The assistant-facing markdown, within the budget.")


# --- edges, tags, feedback, namespaces, stats ---------------------------------------------------


class EdgeIn(StrictSerializer):
    source = serializers.UUIDField()
    target = serializers.UUIDField()
    relation = serializers.ChoiceField(choices=Relation.choices)
    strength = serializers.FloatField(min_value=0, max_value=1, default=1.0)


class EdgeFilterIn(serializers.Serializer):
    namespace = _namespace_field()
    memory = serializers.UUIDField(required=False, help_text="Edges touching this memory.")
    relation = serializers.ChoiceField(choices=Relation.choices, required=False)


class EdgeOut(serializers.ModelSerializer):
    namespace = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = CausalEdge
        fields = ["id", "namespace", "source", "target", "relation", "strength", "created_at"]
        read_only_fields = fields


class TagFilterIn(serializers.Serializer):
    namespace = _namespace_field()


class TagOut(serializers.Serializer):
    name = serializers.CharField()
    count = serializers.IntegerField(help_text="Active memories carrying the tag.")


class FeedbackIn(StrictSerializer):
    query_log_id = serializers.IntegerField(min_value=1, max_value=2**62)
    was_useful = serializers.BooleanField(required=False, allow_null=True, default=None)
    result_feedback = serializers.DictField(
        child=serializers.BooleanField(),
        required=False,
        help_text="{memory id: true if useful, false if not}",
    )


class FeedbackOut(serializers.Serializer):
    query_log_id = serializers.IntegerField()
    was_useful = serializers.BooleanField(allow_null=True)
    result_feedback = serializers.DictField(child=serializers.BooleanField())


class NamespacePolicyIn(StrictSerializer):
    review = serializers.ChoiceField(choices=ReviewPolicy.choices, required=False)
    secrets = serializers.ChoiceField(choices=SecretsPolicy.choices, required=False)


class NamespacePolicyOut(serializers.Serializer):
    name = serializers.CharField()
    review = serializers.CharField()
    secrets = serializers.CharField()


class ReviewOut(serializers.Serializer):
    id = serializers.UUIDField()
    review = serializers.CharField()
    near_duplicates = NearDuplicateOut(many=True)
    possible_updates = PossibleUpdateOut(many=True)


class NamespaceOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    memory_count = serializers.IntegerField()
    writable = serializers.BooleanField(help_text="False for a read-only token.")


class NamespaceStatsOut(serializers.Serializer):
    namespace = serializers.CharField()
    memories = serializers.IntegerField()
    archived = serializers.IntegerField()
    edges = serializers.IntegerField()
    tags = serializers.IntegerField()
    searches = serializers.IntegerField()
    searches_with_feedback = serializers.IntegerField()
    evidence_gaps = serializers.IntegerField()


class StatsOut(serializers.Serializer):
    namespaces = NamespaceStatsOut(many=True)
