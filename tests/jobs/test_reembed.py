"""Re-embedding and backfill with the real model."""

from __future__ import annotations

import numpy as np
import pytest

from apps.jobs.models import Job
from apps.jobs.services import job_execute
from apps.memories.embedding_input import embedding_text
from apps.memories.models import Memory
from apps.vectors.embeddings import embed_texts, model_name


def test_backfills_and_reembeds_stale_vectors_in_batches(
    namespace, memories_factory, embedding_model
):
    missing = memories_factory(namespace, 5)  # no vector at all
    old = memories_factory(namespace, 4, embedding=[0.0] * 383 + [1.0], embedding_model="old-model")
    current = memories_factory(namespace, 1, embedding=[1.0] + [0.0] * 383)[0]
    Memory.objects.filter(pk=current.pk).update(embedding_model=model_name())
    calls = []

    run = job_execute(
        Job.REEMBED,
        namespace_id=namespace.pk,
        batch_size=3,
        progress=lambda done, total: calls.append((done, total)),
    )

    assert run.changes["memories_updated"] == 9
    assert run.changes["backfilled"] == 5 and run.changes["reembedded"] == 4
    assert calls == [(0, 9), (3, 9), (6, 9), (9, 9)]
    for memory in Memory.objects.filter(pk__in=[m.pk for m in missing + old]):
        assert memory.embedding_model == model_name()
        expected = embed_texts([embedding_text(memory.title, memory.content)])[0]
        assert np.allclose(memory.embedding, expected, atol=1e-5)
    current.refresh_from_db()
    assert current.embedding[0] == pytest.approx(1.0)  # up-to-date vectors are left alone

    assert job_execute(Job.REEMBED, namespace_id=namespace.pk).changes["memories_updated"] == 0


def test_model_setting_change_marks_everything_stale(namespace, memories_factory, settings):
    memories_factory(namespace, 2, embedding=[1.0] + [0.0] * 383, embedding_model=model_name())
    from apps.memories.jobs.reembed import stale_memories

    assert stale_memories(namespace).count() == 0
    settings.EMBEDDING_MODEL = "some-other-model"
    assert stale_memories(namespace).count() == 2
