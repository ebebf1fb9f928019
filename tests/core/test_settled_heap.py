"""A server process that has warmed up leaves what it loaded (the model, the modules, the
caches) out of the cyclic collector's walks (memoryhub/heap.py, called at the end of
memoryhub/warmup.py): a full collection over them took ~150 ms every few dozen searches."""

from __future__ import annotations

import gc

import pytest

from memoryhub.heap import YOUNG_COLLECTION_THRESHOLD
from memoryhub.warmup import warm


@pytest.fixture
def collector_restored():
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()  # this test process's collector walks everything again afterwards
    gc.set_threshold(*threshold)


@pytest.mark.django_db
def test_after_warm_up_what_was_loaded_is_left_out_of_collections(collector_restored):
    warm(http=False)
    frozen = gc.get_freeze_count()
    assert frozen > 50_000  # the loaded objects are in the permanent generation
    assert len(gc.get_objects()) < frozen // 5  # the collector's walks no longer see them
    assert gc.get_threshold()[0] == YOUNG_COLLECTION_THRESHOLD > 700  # fewer young collections
