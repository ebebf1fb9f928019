"""A large import leaves the planner knowing the namespace it filled.

Autovacuum analyzes a table once a tenth of it has changed, so a namespace imported into a
bigger table used to be planned as if it held one row until much later (measured at scale:
searches of 1.4-2 s instead of ~80 ms). An import of IMPORT_ANALYZE_MIN_MEMORIES or more
analyzes the memory table when it commits."""

from __future__ import annotations

import pytest
from django.db import connection

from apps.memories.models import Memory, Namespace
from apps.transfer.transfer import import_records
from tests.factories import bare_memories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


def _estimated_rows(namespace: Namespace) -> int:
    """The planner's row estimate for the namespace's memories."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"EXPLAIN (FORMAT JSON) SELECT id FROM {Memory._meta.db_table} WHERE namespace_id = %s",
            [namespace.id],
        )
        return cursor.fetchone()[0][0]["Plan"]["Plan Rows"]


def _import_into_a_table_the_statistics_know(settings, threshold: int, capture) -> Namespace:
    settings.IMPORT_ANALYZE_MIN_MEMORIES = threshold
    bare_memories(Namespace.objects.create(name="analyzed"), 3000)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Memory._meta.db_table}")
    records = [
        {"namespace": "imported", "id": f"rec-{i}", "content": f"Imported note {i} about tides."}
        for i in range(40)
    ]
    with capture(execute=True):
        stats = import_records(records, progress=False)
    assert stats.created == 40
    return Namespace.objects.get(name="imported")


def test_an_import_over_the_threshold_refreshes_the_statistics(
    settings, django_capture_on_commit_callbacks
):
    imported = _import_into_a_table_the_statistics_know(
        settings, 40, django_capture_on_commit_callbacks
    )
    assert 20 <= _estimated_rows(imported) <= 80


def test_a_small_import_leaves_autovacuum_to_do_it(settings, django_capture_on_commit_callbacks):
    # The state the refresh prevents: the planner has never seen the new namespace.
    imported = _import_into_a_table_the_statistics_know(
        settings, 41, django_capture_on_commit_callbacks
    )
    assert _estimated_rows(imported) <= 2
