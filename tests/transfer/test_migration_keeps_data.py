"""A database made before BatchJob moved to the transfer app upgrades without losing a batch: a
job kept by the old release is found, whole, through the new model, in the same table, and the
new release's runner writes it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.memories.models import Memory
from apps.transfer import batch_jobs
from apps.transfer.models import BatchJob, BatchState

pytestmark = pytest.mark.django_db(transaction=True)

# The last migration of today's main; going back there unapplies the transfer app's too.
BEFORE_THE_MOVE = [("memories", "0025_memory_reviewed_by")]


def test_a_batch_kept_before_the_move_is_found_and_written_after_it(embedding_model):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_THE_MOVE)
    executor.loader.build_graph()
    assert ("transfer", "0001_initial") not in executor.loader.applied_migrations
    old_apps = executor.loader.project_state(BEFORE_THE_MOVE).apps
    namespace = old_apps.get_model("memories", "Namespace").objects.create(name="older")
    items = [{"content": "Kept by the release before the move."}]
    kept = old_apps.get_model("memories", "BatchJob").objects.create(
        namespace=namespace, door="rest", items=items, total=1, done=0
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    found = BatchJob.objects.get(pk=kept.pk)
    assert (found.namespace.name, found.items, found.total) == ("older", items, 1)
    assert found.state == BatchState.QUEUED
    assert BatchJob._meta.db_table == "memories_batchjob"
    assert batch_jobs.drain() == 1
    assert Memory.objects.get(namespace__name="older").content == items[0]["content"]
    assert BatchJob.objects.get(pk=kept.pk).state == BatchState.DONE
