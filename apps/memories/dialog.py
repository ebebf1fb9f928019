"""A dialog turn read after the turn before it.

A short reply ("Sure! I can give it to you tomorrow.", "Thanks! It's a mix of drama and
romance.") means little alone: what it answers is in the turn before. Each turn of a dialog
session therefore has one more passage (apps/memories/passages.py): the vector of the previous
turn's text followed by its own, so a question about the recipe or the screenplay finds the
reply that answers it. Search reads it as it reads the sentence passages (the best passage
cosine next to the memory's own).

A session is what the search's context stage calls one: memories of a namespace that share one
timestamp (an imported conversation with its session date), ordered by the natural order of
their external ids. A memory with a timestamp of its own, the usual note, has no previous turn
and costs nothing here.

The passage depends on the previous turn's text, so every write that changes who comes before a
turn or what it says refreshes the turns concerned: a new turn and the one after it, an edited
turn and the one after it, and the one after a deleted turn (whose passage went with it).

A write of many turns at once (an imported conversation, a large batch) would spend two thirds
of its encoder time on these passages: a pair is about twice as long as the turn. Such a write
stores its turns, searchable at once by their own vectors and sentence passages, and queues
them (PendingTurn, in the same transaction); the dialog_passages job writes their passages in
slices right after, in the background: the worker where there is one, otherwise the server's
scheduler (memoryhub/schedule.py). A write of at most DIALOG_PASSAGES_INLINE_MAX turns, such
as an assistant saving the turn it just had, writes them inline as before.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from django.conf import settings
from django.db import transaction
from django.db.models import Count

from apps.vectors import embeddings

from .embedding_input import embedding_text
from .models import Memory, Namespace, Passage, PendingTurn
from .natural_order import natural_key

# The position of a turn's previous-turn passage, after any sentence passage (at most 8).
POSITION = 100
# What is read of a memory here: its text and its place in a session.
FIELDS = ("id", "namespace_id", "created_at", "external_id", "title", "content")
# Queued turns written by the job per transaction (one encoder call): a stopped run loses at
# most one slice of work, and an edit waits on a slice's row locks for a second or two.
SLICE = 256


def _sessions(memories: Iterable[Memory]) -> list[list[Memory]]:
    """The whole sessions (namespace, timestamp) that `memories` belong to, each in turn order;
    memories without an external id have no place in an order and are left out."""
    times: dict[int, set] = defaultdict(set)
    for m in memories:
        if m.external_id:
            times[m.namespace_id].add(m.created_at)
    found: dict[tuple, list[Memory]] = defaultdict(list)
    for namespace_id, created in times.items():
        rows = Memory.objects.filter(
            namespace_id=namespace_id, created_at__in=created, external_id__isnull=False
        ).only(*FIELDS)
        for m in rows:
            found[(m.namespace_id, m.created_at)].append(m)
    return [sorted(turns, key=lambda m: natural_key(m.external_id)) for turns in found.values()]


def _pairs(turns: list[Memory], wanted: set, following: bool) -> dict:
    """turn id -> (turn, previous turn) for the wanted turns of one session and, with
    `following`, for the turn after each of them."""
    pairs: dict = {}
    for i, turn in enumerate(turns):
        if turn.pk not in wanted:
            continue
        if i > 0:
            pairs[turn.pk] = (turn, turns[i - 1])
        if following and i + 1 < len(turns):
            pairs[turns[i + 1].pk] = (turns[i + 1], turn)
    return pairs


def next_turns(memories: Iterable[Memory]) -> list[Memory]:
    """The turn after each of `memories` in its session (for a delete: read before it)."""
    wanted = {m.pk for m in memories}
    return [
        turns[i + 1]
        for turns in _sessions(memories)
        for i, turn in enumerate(turns[:-1])
        if turn.pk in wanted and turns[i + 1].pk not in wanted
    ]


def pair_text(turn: Memory, previous: Memory) -> str:
    return (
        embedding_text(previous.title, previous.content)
        + "\n"
        + embedding_text(turn.title, turn.content)
    )


def store(pairs: Sequence[tuple[Memory, Memory]]) -> int:
    """Write the previous-turn passage of each (turn, previous) pair, replacing the turn's old
    one (one encoder call for all); returns how many were written."""
    if not pairs:
        return 0
    vectors = embeddings.embed_texts([pair_text(turn, previous) for turn, previous in pairs])
    Passage.objects.filter(
        memory__in=[turn.pk for turn, _ in pairs], previous__isnull=False
    ).delete()
    Passage.objects.bulk_create(
        [
            Passage(memory=turn, previous=previous, position=POSITION, embedding=vector)
            for (turn, previous), vector in zip(pairs, vectors, strict=True)
        ],
        batch_size=500,
    )
    return len(pairs)


def refresh(memories: Iterable[Memory], *, following: bool = True) -> int:
    """The previous-turn passages of `memories` and, with `following`, of the turns after
    them: after a create, an edit or an undelete (the turn after changed neighbour or text).
    Without it: after a delete (`memories` are then the turns that came after the deleted
    ones, see next_turns) and when every turn is re-embedded anyway."""
    memories = list(memories)
    wanted = {m.pk for m in memories}
    pairs: dict = {}
    for turns in _sessions(memories):
        pairs.update(_pairs(turns, wanted, following))
    return store(list(pairs.values()))


def refresh_or_queue(memories: Sequence[Memory]) -> int:
    """After a create: refresh() the new turns now when they are few, otherwise queue them for
    the dialog_passages job (which refreshes them and the turns after them). Returns how many
    were queued: the caller asks for the job after commit (apps/memories/jobs)."""
    turns = [m for m in memories if m.external_id]
    if len(turns) <= settings.DIALOG_PASSAGES_INLINE_MAX:
        refresh(turns)
        return 0
    turns = _in_sessions(turns)
    PendingTurn.objects.bulk_create(
        [PendingTurn(memory_id=m.pk, namespace_id=m.namespace_id) for m in turns],
        ignore_conflicts=True,
        batch_size=1000,
    )
    return len(turns)


def _in_sessions(turns: list[Memory]) -> list[Memory]:
    """The turns that share their timestamp with another turn, of the same write or stored: the
    others (notes with an id and a time of their own, an imported knowledge base) have no
    previous turn and are not queued."""
    count = Counter((m.namespace_id, m.created_at) for m in turns)
    alone: dict[int, set] = defaultdict(set)
    for m in turns:
        if count[(m.namespace_id, m.created_at)] == 1:
            alone[m.namespace_id].add(m.created_at)
    stored = set()
    for namespace_id, times in alone.items():
        stored.update(
            (namespace_id, created)
            for created in Memory.objects.filter(
                namespace_id=namespace_id, created_at__in=times, external_id__isnull=False
            )
            .exclude(pk__in=[m.pk for m in turns])
            .values_list("created_at", flat=True)
            .distinct()
        )
    return [
        m
        for m in turns
        if count[(m.namespace_id, m.created_at)] > 1 or (m.namespace_id, m.created_at) in stored
    ]


def queued(namespace_ids: Iterable[int] | None = None) -> int:
    """How many turns wait for their previous-turn passage (in these namespaces)."""
    rows = PendingTurn.objects.all()
    if namespace_ids is not None:
        rows = rows.filter(namespace_id__in=list(namespace_ids))
    return rows.count()


def health() -> dict:
    """For /healthz: the turns a large write left waiting for the dialog_passages job."""
    return {"turns_waiting": queued()}


def write_queued(namespace: Namespace, **options) -> dict:
    """The dialog_passages job: write the previous-turn passages of the namespace's queued
    turns (and of the turn after each), SLICE turns to a transaction, until none is queued.
    Rows another run holds are skipped, not waited for."""
    turns = written = 0
    while True:
        with transaction.atomic():
            # A session's turns together (by their time), so most pairs are inside a slice.
            ids = list(
                PendingTurn.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(namespace=namespace)
                .order_by("memory__created_at", "memory_id")
                .values_list("memory_id", flat=True)[:SLICE]
            )
            if not ids:
                return {"turns": turns, "passages_written": written}
            written += store(_queued_pairs(ids))
            PendingTurn.objects.filter(memory_id__in=ids).delete()
        turns += len(ids)


def _queued_pairs(ids: list) -> list[tuple[Memory, Memory]]:
    """The pairs of the queued turns `ids` and of the turn after each, except a turn after that
    waits in the queue itself (its own slice writes it)."""
    wanted = set(ids)
    pairs: dict = {}
    for turns in _sessions(Memory.objects.filter(pk__in=ids).only(*FIELDS)):
        pairs.update(_pairs(turns, wanted, following=True))
    after = [pk for pk in pairs if pk not in wanted]
    waiting = set(
        PendingTurn.objects.filter(memory_id__in=after).values_list("memory_id", flat=True)
    )
    return [pair for pk, pair in pairs.items() if pk not in waiting]


def backfill(namespace_id: int | None = None, *, progress=None) -> int:
    """Write the previous-turn passage of every dialog turn that has none (stores written
    before these passages existed); returns how many were written. Turns a large write queued
    are written first (the job's work, done now). Sessions are read one at a time;
    `progress(done, total)` counts them."""
    namespaces = Namespace.objects.all()
    if namespace_id is not None:
        namespaces = namespaces.filter(pk=namespace_id)
    queued_written = sum(write_queued(n)["passages_written"] for n in namespaces)
    rows = Memory.objects.filter(external_id__isnull=False)
    if namespace_id is not None:
        rows = rows.filter(namespace_id=namespace_id)
    has = set(
        Passage.objects.filter(previous__isnull=False, memory__in=rows).values_list(
            "memory_id", flat=True
        )
    )
    sessions = list(
        rows.order_by()
        .values_list("namespace_id", "created_at")
        .annotate(turns=Count("id"))
        .filter(turns__gt=1)
    )
    written = queued_written
    batch: list[tuple[Memory, Memory]] = []
    for done, (namespace, created_at, _) in enumerate(sessions, start=1):
        turns = sorted(
            rows.filter(namespace_id=namespace, created_at=created_at).only(*FIELDS),
            key=lambda m: natural_key(m.external_id),
        )
        missing = {t.pk for t in turns} - has
        batch += _pairs(turns, missing, following=False).values()
        if len(batch) >= 200 or done == len(sessions):
            written += store(batch)
            batch = []
        if progress:
            progress(done, len(sessions))
    return written
