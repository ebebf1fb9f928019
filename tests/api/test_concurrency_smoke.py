"""A few clients at once for a few seconds: their requests overlap instead of queueing.

Speed targets are measured by `make loadtest` (docs/benchmarks.md); this only guards the
serving model: if requests were handled one at a time, wall time would equal the sum of the
latencies."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from apps.memories.models import Memory
from apps.memories.services import memory_batch_create

from .live import bearer

CLIENTS = 6
SECONDS = 3.0


@pytest.mark.django_db(transaction=True)
def test_concurrent_searches_and_writes_overlap(asgi_server, tokens):
    memory_batch_create(
        namespace=tokens.alpha,
        items=[
            {"content": f"Decision {i}: the release train leaves on day {i}."} for i in range(40)
        ],
    )
    headers = bearer(tokens.alpha_rw)

    def client(n: int) -> list[tuple[float, float, int, str | None]]:
        spans = []
        with httpx.Client(base_url=f"{asgi_server}/api/v1", timeout=60, headers=headers) as http:
            stop = time.perf_counter() + SECONDS
            i = 0
            while time.perf_counter() < stop:
                began = time.perf_counter()
                if n % 2:  # half the clients write, half search
                    r = http.post("/memories/", json={"content": f"client {n} note {i} {began}"})
                    made = r.json()["memory"]["id"] if r.status_code == 201 else None
                else:
                    r = http.post("/search/", json={"query": f"when does train {i} leave?"})
                    made = None
                spans.append((began, time.perf_counter(), r.status_code, made))
                i += 1
        return spans

    began = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        spans = [s for result in pool.map(client, range(CLIENTS)) for s in result]
    wall = time.perf_counter() - began

    assert spans and all(code in (200, 201) for _, _, code, _ in spans)
    busy = sum(end - start for start, end, _, _ in spans)
    # One at a time, busy time could not exceed the wall time; overlapping, it is a multiple.
    assert busy > 1.5 * wall, f"requests queued: {busy:.1f} s of work in {wall:.1f} s"
    written = [made for *_, made in spans if made]
    assert written
    assert Memory.objects.filter(id__in=written).count() == len(written)  # each stored once
