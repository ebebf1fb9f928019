"""The neighbour window read beside the row fetch: on a second connection outside a
transaction (and then it sees only what is committed), on the caller's own inside one (and then
it sees the caller's own uncommitted rows, as the rest of the search does)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import transaction

from apps.search.pipeline import retrieve
from apps.search.pipeline.reads.beside import beside
from apps.search.pipeline.scope import Scope
from tests.factories import BASE_TIME

GAP = 3600
MINUTE = timedelta(minutes=1)


def _read_where(scope, ids):
    return threading.current_thread().name, retrieve.window_rows(scope, ids, GAP, by_id=True)


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_window_is_read_on_another_thread(remember, namespace):
    first, second = remember(["The boiler was serviced.", "The boiler needs a new valve."])
    scope = Scope(namespace_id=namespace.id)
    thread, rows = beside(_read_where, scope, [str(first.id)])()
    assert thread.startswith("search-read")
    assert {r[0] for r in rows} == {str(second.id)}  # the next memory, a minute later
    assert rows == retrieve.window_rows(scope, [first.created_at], GAP)


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_it_reads_what_the_transaction_sees(remember, namespace):
    (first,) = remember(["The boiler was serviced."])
    scope = Scope(namespace_id=namespace.id)
    with transaction.atomic():
        later = {"content": "The boiler needs a new valve.", "created_at": BASE_TIME + MINUTE}
        (second,) = remember([later])  # not committed
        thread, rows = beside(_read_where, scope, [str(first.id)])()
    assert thread == threading.current_thread().name
    assert {r[0] for r in rows} == {str(second.id)}
