"""Namespaces, memories, tags and causal edges (SPEC section 2).

The full-text vector (`search_vector`) is written by database triggers (migration 0002), so it is
right whichever path changed a row or its tags; Python never computes it.
"""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Cast, Now
from django.utils import timezone
from pgvector.django import HalfVectorField, HnswIndex, VectorField

from apps.vectors.nearest import EMBEDDING_DIM

from .querysets import EdgeQuerySet, MemoryQuerySet, NamespaceQuerySet, SeenMemoryManager
from .titles import shown_title


class ReviewPolicy(models.TextChoices):
    """Which writes wait for a person before they take effect (docs/trust.md)."""

    OFF = "off"  # every write takes effect; its risk is still recorded
    FLAGGED = "flagged"  # writes the risk check flags wait
    ALL = "all"  # every write through a token or a connected app waits, but trusted tokens'


class SecretsPolicy(models.TextChoices):
    """What a write carrying a credential gets: refused, or stored with it replaced."""

    REFUSE = "refuse"
    REDACT = "redact"


class Namespace(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    # New namespaces hold flagged writes; the migration left namespaces that existed before
    # the policy at "off", the behaviour they had.
    review = models.CharField(
        max_length=10, choices=ReviewPolicy.choices, default=ReviewPolicy.FLAGGED
    )
    secrets = models.CharField(
        max_length=10, choices=SecretsPolicy.choices, default=SecretsPolicy.REFUSE
    )

    objects = NamespaceQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Tag(models.Model):
    name = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Category(models.TextChoices):
    DECISION = "decision"
    PATTERN = "pattern"
    WARNING = "warning"
    LEARNING = "learning"
    FACT = "fact"
    NOTE = "note"
    CONVERSATION = "conversation"


class Tier(models.TextChoices):
    CONSTITUTIONAL = "constitutional"
    CORE = "core"
    NORMAL = "normal"
    SCRATCH = "scratch"


class Review(models.TextChoices):
    """A memory's review state: only approved memories are seen outside the review queue."""

    APPROVED = "approved"
    PENDING = "pending"
    REJECTED = "rejected"


CONTENT_UNIQUE = "memory_ns_content_uniq"


class Memory(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Plain defaults, not auto_now: imports keep the timestamps they bring; services set
    # updated_at on every change.
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(default=timezone.now)
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="memories")
    # The id a memory had in the system it was imported from (neutral format "id"), kept so
    # export -> import round-trips and benchmark relevance lists resolve.
    external_id = models.CharField(max_length=200, null=True, blank=True)
    title = models.CharField(max_length=300, blank=True, default="")
    content = models.TextField()
    category = models.CharField(max_length=20, choices=Category.choices, default=Category.NOTE)
    tags = models.ManyToManyField(Tag, related_name="memories", blank=True)
    file_path = models.CharField(max_length=1000, blank=True, default="")
    source = models.CharField(max_length=200, blank=True, default="")
    trigger_phrases = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    tier = models.CharField(max_length=20, choices=Tier.choices, default=Tier.NORMAL)
    importance = models.FloatField(default=0.5, help_text="Quality score 0..1")
    pagerank_score = models.FloatField(default=0.0)
    stability = models.FloatField(default=1.0, help_text="Decay factor 0..1; 1 = fresh")
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    access_count = models.PositiveIntegerField(default=0)
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    # Whether the vector is in the HNSW index yet. A large batch stores its rows outside it and
    # the vector_index job adds them in the background (apps/vectors/vector_index.py): an
    # index insert into a graph of 400k vectors costs more than encoding the text. Until then
    # a walk of the index meets them by an exact scan of the namespace's few rows outside it
    # (apps/vectors/nearest.py), so they are found from the moment they commit.
    vector_indexed = models.BooleanField(default=True, db_default=True)
    search_vector = SearchVectorField(null=True, editable=False)
    content_hash = models.CharField(max_length=64, editable=False)
    archived = models.BooleanField(default=False)
    metadata = models.JSONField(default=dict, blank=True)
    # Counts the changes a person or an assistant made (never search's access counters): a
    # client sends the version it read (REST If-Match, MCP expected_version, the edit form) and
    # a write on a newer row is refused rather than silently undoing the change in between.
    # A database default too: rows written by SQL or by a process of the previous release.
    version = models.PositiveIntegerField(default=1, db_default=1)
    # Pending memories wait for an editor (apps/queues/review.py) and are found by nothing
    # else; a database default so rows written by SQL, COPY and older processes are approved.
    review = models.CharField(
        max_length=10, choices=Review.choices, default=Review.APPROVED, db_default="approved"
    )
    review_reason = models.CharField(max_length=500, blank=True, default="", db_default="")
    # What the risk check found in the text at write: [{kind, reason, start, end}], [] if clean.
    risk = models.JSONField(default=list, blank=True, db_default=[])
    # Who approved a memory the review policy held ("ana", "token ci (mh_ab…)"); empty for
    # memories that took effect when written.
    reviewed_by = models.CharField(max_length=300, blank=True, default="", db_default="")

    # Where the memory came from (apps/memories/provenance.py), set once by the write path and
    # never changed by an edit. The columns hold what search and browse filter by; the rest
    # (credential kind and client id, source_url, the import's file, written_at) is in
    # `provenance`. Empty on rows written before provenance was recorded.
    origin_door = models.CharField(max_length=20, blank=True, default="", db_default="")
    origin_person = models.CharField(max_length=150, blank=True, default="", db_default="")
    origin_credential = models.CharField(max_length=200, blank=True, default="", db_default="")
    origin_client = models.CharField(max_length=200, blank=True, default="", db_default="")
    provenance = models.JSONField(default=dict, blank=True, db_default={})

    # When the fact holds: from valid_from (null: since created_at, when it was learnt) until
    # valid_until (null: still holds). Superseding a memory sets its valid_until to the
    # successor's valid_from; search answers "as of now" from these (apps/search).
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)

    # What people and assistants see: pending memories left out. The write path, the review
    # queue and the trash read `every_state`.
    objects = SeenMemoryManager()
    every_state = MemoryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        base_manager_name = "every_state"
        verbose_name_plural = "memories"
        indexes = [
            # On the vector cast to halfvec: half the index of float vectors, the same
            # neighbours to within rounding (search computes similarities on the stored floats;
            # apps/search/pipeline/reads/semantic.py orders by exactly this expression).
            HnswIndex(
                OpClass(
                    Cast("embedding", HalfVectorField(dimensions=EMBEDDING_DIM)),
                    name="halfvec_cosine_ops",
                ),
                name="memory_embedding_half_hnsw",
                m=16,
                ef_construction=64,
                condition=Q(vector_indexed=True),
            ),
            # The rows a batch left outside the HNSW index, per namespace: few, and read by
            # every index walk (apps/vectors/nearest.py) and the vector_index job.
            models.Index(
                name="memory_ns_unindexed",
                fields=["namespace"],
                condition=Q(vector_indexed=False),
            ),
            GinIndex(name="memory_search_vector_gin", fields=["search_vector"]),
            # category included: the analytics page's growth by category reads only the index.
            models.Index(
                name="memory_ns_created_cat",
                fields=["namespace", "created_at"],
                include=["category"],
            ),
            # The stale queue's counts (every navigation bar) read only this index, not the
            # wide rows with their embeddings, where the visibility map allows.
            models.Index(
                name="memory_ns_stale",
                fields=["namespace", "created_at"],
                include=["id", "stability", "tier", "last_accessed_at"],
                condition=models.Q(archived=False),
            ),
            models.Index(name="memory_ns_hash", fields=["namespace", "content_hash"]),
            models.Index(name="memory_ns_file", fields=["namespace", "file_path"]),
            models.Index(name="memory_ns_category", fields=["namespace", "category"]),
            # Browse sorts (apps/memories/browse.py): keyset pages read these in order.
            models.Index(name="memory_ns_importance", fields=["namespace", "importance", "id"]),
            models.Index(name="memory_ns_pagerank", fields=["namespace", "pagerank_score", "id"]),
            models.Index(name="memory_ns_used", fields=["namespace", "access_count", "id"]),
            # Memories whose validity ended (superseded or known to end): few, so the search's
            # look-up of superseded matches and the browse filter read a small partial index.
            models.Index(
                name="memory_ns_ended",
                fields=["namespace", "valid_until"],
                condition=models.Q(valid_until__isnull=False),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(review__in=Review.values), name="memory_review_valid"
            ),
            # Target of the composite foreign keys that keep both ends of an edge in one namespace.
            models.UniqueConstraint(fields=["id", "namespace"], name="memory_id_namespace_uniq"),
            models.UniqueConstraint(
                fields=["namespace", "external_id"],
                condition=Q(external_id__isnull=False),
                name="memory_ns_external_id_uniq",
            ),
            # The same record once per namespace, however many clients send it at once: the
            # same text at the same time under the same external id (none counts as one
            # value). A text said again at another time, or under another id (a conversation
            # turn repeated on another day), is a memory of its own. Chunks after a
            # document's first are exempt (two documents may share a section) and archived
            # rows are too (a merge archives the duplicates it folds in).
            models.UniqueConstraint(
                fields=["namespace", "content_hash", "created_at", "external_id"],
                condition=Q(archived=False)
                & (~Q(metadata__has_key="chunk_index") | Q(metadata__chunk_index=0)),
                name=CONTENT_UNIQUE,
                nulls_distinct=False,
            ),
            models.CheckConstraint(
                condition=Q(importance__gte=0) & Q(importance__lte=1),
                name="memory_importance_range",
            ),
            models.CheckConstraint(
                condition=Q(stability__gte=0) & Q(stability__lte=1),
                name="memory_stability_range",
            ),
            models.CheckConstraint(
                condition=Q(pagerank_score__gte=0) & Q(pagerank_score__lte=1),
                name="memory_pagerank_range",
            ),
            models.CheckConstraint(
                condition=Q(category__in=Category.values), name="memory_category_valid"
            ),
            models.CheckConstraint(condition=Q(tier__in=Tier.values), name="memory_tier_valid"),
            models.CheckConstraint(condition=~Q(content=""), name="memory_content_not_empty"),
            models.CheckConstraint(
                condition=Q(valid_until__isnull=True)
                | Q(valid_from__isnull=True)
                | Q(valid_until__gte=models.F("valid_from")),
                name="memory_validity_order",
            ),
        ]

    def __str__(self) -> str:
        return self.title or self.content[:60]

    @property
    def display_title(self) -> str:
        """The name every page shows (apps/memories/titles.shown_title); the speaker in the
        metadata is read only where the row was loaded with it (no extra query)."""
        if self.title and self.title.strip():
            return self.title.strip()  # without reading content (it may be deferred)
        speaker = ""
        if "metadata" not in self.get_deferred_fields() and isinstance(self.metadata, dict):
            found = self.metadata.get("speaker")
            speaker = found if isinstance(found, str) else ""
        return shown_title(self.title, self.content, speaker)

    @property
    def was_edited(self) -> bool:
        """Written with updated_at = created_at; only a later change moves updated_at."""
        return self.updated_at > self.created_at

    @property
    def public_id(self) -> str:
        """The id shown in exports and benchmarks: the imported id if any, else the uuid."""
        return self.external_id or str(self.id)

    @property
    def effective_valid_from(self):
        """When the fact started to hold: valid_from, else when it was learnt."""
        return self.valid_from or self.created_at

    def touch(self) -> None:
        self.last_accessed_at = timezone.now()
        self.access_count += 1


class Passage(models.Model):
    """One sentence of a memory that says several things, embedded on its own
    (apps/memories/passages.py).

    A turn's vector averages everything it says; a question about one of its sentences ("What
    did Alice paint?" against "Thanks! ... Here's the sunset I painted last week.") matches
    that sentence better than the whole. Search reads a memory's best passage cosine next to
    its own, in the same statement that fetches the candidates' rows."""

    memory = models.ForeignKey(
        Memory,
        on_delete=models.CASCADE,
        related_name="passages",
        db_index=False,  # passage_memory below (the foreign key's own index was a second copy)
    )
    position = models.PositiveSmallIntegerField()
    embedding = VectorField(dimensions=EMBEDDING_DIM)
    # Set on a dialog turn's one passage that is not a sentence of it: the turn read after the
    # turn before it in its session (apps/memories/dialog.py), which it answers or goes on.
    previous = models.ForeignKey(
        Memory, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # The memory's namespace, copied by the database on every insert (and kept when a memory
    # moves) whatever writes the row (migration 0027's triggers): the exact semantic scan reads
    # a namespace's passages as one range of this index instead of probing them memory by
    # memory (apps/search/pipeline/reads/semantic.py). The passages go with their memory, so
    # the column needs no constraint of its own.
    namespace = models.ForeignKey(
        Namespace,
        null=True,
        editable=False,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,  # passage_namespace below leads with it
        related_name="+",
    )

    class Meta:
        indexes = [
            models.Index(name="passage_memory", fields=["memory"]),
            # By namespace, then memory: concurrent writers of one namespace insert at
            # scattered places of the index (memory ids are random) rather than all into the
            # one entry of an index on the namespace alone.
            models.Index(name="passage_namespace", fields=["namespace", "memory"]),
        ]

    def __str__(self) -> str:
        return f"passage {self.position} of {self.memory_id}"


class NamespaceChange(models.Model):
    """One row per statement that changed a namespace's memories (the columns a search reads:
    embedding, state, validity, time, namespace) or passages, written by the database's
    triggers whatever writes the rows (migration 0029). A process that keeps a namespace's
    vectors (apps/search/pipeline/reads/namespace_vectors.py) reads the count and the largest
    id of the namespace's rows before each search: a change committed since, whatever the
    order of commits, adds a row. Rows are only inserted, so writers never wait on each
    other here; `namespace_changes_prune` deletes old ones and adds one row in their place."""

    id = models.BigAutoField(primary_key=True)
    namespace = models.ForeignKey(
        Namespace,
        on_delete=models.DO_NOTHING,
        db_constraint=False,  # written by triggers, removed by the prune with the rest
        db_index=False,  # namespace_change below leads with it
        related_name="+",
    )
    at = models.DateTimeField(db_default=Now())

    class Meta:
        indexes = [models.Index(name="namespace_change", fields=["namespace", "id"])]

    def __str__(self) -> str:
        return f"change {self.pk} of namespace {self.namespace_id}"


class PendingTurn(models.Model):
    """A dialog turn whose previous-turn passage a large write left to the background job
    (apps/memories/dialog.py, write_queued): written in the same transaction as the turn, so a
    failed write queues nothing and a stopped job leaves its queue for the next run."""

    memory = models.OneToOneField(
        Memory, primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="+")
    queued_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(name="pendingturn_namespace", fields=["namespace", "memory"])]

    def __str__(self) -> str:
        return f"pending previous-turn passage of {self.memory_id}"


class Relation(models.TextChoices):
    CAUSED = "caused"
    SUPERSEDES = "supersedes"
    CONTRADICTS = "contradicts"
    DEPENDS_ON = "depends_on"
    RELATES_TO = "relates_to"


class CausalEdge(models.Model):
    """A directed link between two memories of one namespace.

    `namespace` is denormalized so that composite foreign keys (source, namespace) and
    (target, namespace) -> memory(id, namespace) make a cross-namespace edge impossible in the
    database itself (migration 0002).
    """

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="edges")
    source = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="edges_out")
    target = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="edges_in")
    relation = models.CharField(max_length=20, choices=Relation.choices)
    strength = models.FloatField(default=1.0)
    created_at = models.DateTimeField(default=timezone.now)

    objects = EdgeQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "target", "relation"], name="edge_unique_relation"
            ),
            models.CheckConstraint(condition=~Q(source=models.F("target")), name="edge_no_self"),
            models.CheckConstraint(
                condition=Q(strength__gte=0) & Q(strength__lte=1), name="edge_strength_range"
            ),
            models.CheckConstraint(
                condition=Q(relation__in=Relation.values), name="edge_relation_valid"
            ),
        ]
        indexes = [models.Index(name="edge_target", fields=["target", "relation"])]

    def __str__(self) -> str:
        return f"{self.source_id} -{self.relation}-> {self.target_id}"


class RecheckReason(models.TextChoices):
    SUPERSEDED = "superseded"
    DELETED = "deleted"
    EDITED = "edited"


class RecheckMark(models.Model):
    """`memory` rests on `basis` (a `depends_on` link to it, or it was `caused` by it, directly
    or within MEMORY_RECHECK_DEPTH links), and `basis` changed: superseded, deleted or its
    content edited. The mark is written in the same transaction as the change
    (apps/memories/recheck.py); while a memory has one it waits in the Re-check queue.

    `basis` is a plain id, not a foreign key, so a mark outlives its deleted basis. `token`
    says which change made the mark, so taking that change back clears exactly its marks: the
    successor's id (superseded), the basis's content hash before the edit (edited), "" for a
    delete.
    """

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="recheck_marks")
    basis_id = models.UUIDField()
    basis_title = models.CharField(max_length=300, blank=True, default="")
    reason = models.CharField(max_length=12, choices=RecheckReason.choices)
    token = models.CharField(max_length=64, blank=True, default="")
    depth = models.PositiveSmallIntegerField(default=1)
    marked_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "basis_id", "reason"], name="recheckmark_uniq"
            ),
        ]
        indexes = [
            models.Index(name="recheckmark_basis", fields=["basis_id", "reason"]),
            models.Index(name="recheckmark_ns", fields=["namespace", "marked_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} rests on {self.basis_id} ({self.reason})"


class PossibleUpdate(models.Model):
    """A new memory that read like an update of a stored one when it was written, or that
    negates it (apps/memories/updates.py), waiting in the conflicts queue for a person to
    confirm (supersede, for an update) or decide which holds. One row per (newer, older)."""

    class Kind(models.TextChoices):
        UPDATE = "update"
        CONTRADICTION = "contradiction"

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="+")
    newer = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    older = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.UPDATE)
    why = models.CharField(max_length=500)
    score = models.FloatField()
    found_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["newer", "older"], name="possibleupdate_uniq"),
        ]
        indexes = [models.Index(name="possibleupdate_ns", fields=["namespace", "found_at"])]

    def __str__(self) -> str:
        return f"{self.newer_id} may update {self.older_id}"
