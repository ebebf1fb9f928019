"""Plain factory functions for tests: real rows through the real write path, and the small
value objects the pure pipeline stages take. Defaults are the boring case; a test names only
what matters to it."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta

import numpy as np

from apps.memories.models import Memory, Namespace
from apps.memories.services import edge_create, memory_create
from apps.search.types import Ranked

BASE_TIME = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def namespace(name: str = "test-ns") -> Namespace:
    return Namespace.objects.get_or_create(name=name)[0]


def memories(
    ns: Namespace, items: Iterable[str | dict], start: datetime = BASE_TIME
) -> list[Memory]:
    """Memories written by memory_batch_create (embedded by the real model), one minute apart
    unless an item sets created_at."""
    from apps.memories.services import memory_batch_create

    rows = [{"content": i} if isinstance(i, str) else dict(i) for i in items]
    for n, row in enumerate(rows):
        row.setdefault("created_at", start + timedelta(minutes=n))
    results = memory_batch_create(
        namespace=ns, items=rows, check_near_duplicates=False, infer=False
    )
    return [r.memory for r in results]


def bare_memories(
    ns: Namespace, count: int, fields: Callable[[int], dict] = lambda i: {}
) -> list[Memory]:
    """Rows inserted directly, without the model or the write path (no vectors, no tags), for
    tests about SQL and jobs; `fields(i)` sets row i's own columns."""
    rows = []
    for i in range(count):
        row = {"content": f"memory {i} {uuid.uuid4().hex}", **fields(i)}
        digest = hashlib.sha256(row["content"].encode()).hexdigest()
        rows.append(Memory(namespace=ns, content_hash=digest, **row))
    return Memory.objects.bulk_create(rows, batch_size=1000)


def unit(vector: Sequence[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    return v / np.linalg.norm(v)


def ranked(key: str, score: float = 1.0, vector: Sequence[float] | None = None, **fields) -> Ranked:
    """A Ranked item for the pure stages; `vector` becomes its unit embedding."""
    if vector is not None:
        fields["embedding"] = unit(vector)
    return Ranked(id=key, score=score, fused=fields.pop("fused", score), **fields)


def import_dialog(turns: Sequence[str], namespace: str = "chat") -> dict[str, Memory]:
    """One imported dialog session: turns "Speaker: text" sharing one timestamp, with external
    ids "<namespace>:D1:1", ... and the speaker as tag, as locomo-dev is loaded. Returns the
    memories by external id."""
    from apps.transfer.transfer import import_records

    import_records(
        [
            {
                "id": f"{namespace}:D1:{i}",
                "namespace": namespace,
                "content": text,
                "created_at": "2023-05-08T13:56:00",
                "tags": [text.split(":")[0].lower()],
            }
            for i, text in enumerate(turns, start=1)
        ],
        progress=False,
    )
    return {m.external_id: m for m in Memory.objects.filter(namespace__name=namespace)}


def jenkins_chain(namespace: Namespace) -> tuple[Memory, Memory]:
    """An incident and the decision it `caused`: the why path's smallest chain."""
    incident = memory_create(
        namespace=namespace,
        title="Jenkins outage of 3 March",
        content="The Jenkins build controller's disk filled up and no pipeline ran for hours.",
    ).memory
    decision = memory_create(
        namespace=namespace,
        title="CI moved to GitHub Actions",
        content="We moved CI off Jenkins to GitHub Actions.",
    ).memory
    edge_create(source=incident, target=decision, relation="caused")
    return incident, decision
