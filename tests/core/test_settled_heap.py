"""After warm-up a server process leaves what it loaded out of the cyclic collector's walks
(memoryhub/heap.py, called at the end of memoryhub/warmup.py): a full collection over the
model, the modules and the caches took ~150 ms every few dozen searches. Checked in a fresh
interpreter, so this test process's own collector is left alone."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gc, json
from memoryhub.heap import YOUNG_COLLECTION_THRESHOLD, settle_heap
loaded = [[i] for i in range(50_000)]  # stands for what warm-up loads
settle_heap()
frozen = gc.get_freeze_count()
gc.collect()  # a full collection after settling walks only what came later
young = [[i] for i in range(100)]
print(json.dumps({
    "frozen": frozen,
    "threshold": gc.get_threshold()[0],
    "expected": YOUNG_COLLECTION_THRESHOLD,
    "walked": len(gc.get_objects()),
}))
"""


def test_what_warm_up_loaded_is_left_out_of_collections():
    import json

    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=120
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["frozen"] >= 50_000  # the loaded objects are in the permanent generation
    assert found["walked"] < found["frozen"] // 5  # the collector's walks no longer see them
    assert found["threshold"] == found["expected"] > 700  # young objects collected less often
