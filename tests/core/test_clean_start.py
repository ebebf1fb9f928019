"""A newcomer's first `make run` prints nothing that reads as a failure.

The server starts as `make run` starts it (`manage.py serve`, two web processes, no broker) on
this session's test database, with an empty model cache so the first start exports the model to
ONNX as a fresh clone does. /healthz is polled while it warms up (each poll answered 503
"starting"), and the whole log, up to the first 200 and the stop, is read.
"""

from __future__ import annotations

import json
import re
import time

import httpx
import pytest

from tests.api.live import free_port
from tests.served import serve, stop

pytestmark = pytest.mark.django_db(transaction=True)

ERROR_LINE = re.compile(r'"level": "(ERROR|CRITICAL|WARNING)"|\b(ERROR|CRITICAL)\b')


def test_a_clean_first_start_logs_no_error_and_no_warning(tmp_path):
    process = serve(free_port(), EMBEDDING_CACHE_DIR=str(tmp_path / "models"), LOG_FORMAT="json")
    port = process.args[process.args.index("--port") + 1]
    starting = 0
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            deadline = time.monotonic() + 240
            while True:
                assert time.monotonic() < deadline, "the server did not become ready"
                assert process.poll() is None, "the server exited"
                try:
                    answer = client.get("/healthz")
                except httpx.TransportError:
                    answer = None
                if answer is not None and answer.status_code == 200:
                    break
                if answer is not None and answer.status_code == 503:
                    assert answer.json()["status"] == "starting"
                    starting += 1
                time.sleep(0.25)
    finally:
        output = stop(process)
    assert starting >= 3, "the poll never saw the warm-up; the test proves nothing"
    assert (tmp_path / "models").exists() and any((tmp_path / "models").rglob("model.onnx"))
    errors = [line for line in output.splitlines() if ERROR_LINE.search(line)]
    assert errors == [], "\n".join(errors[:20])
    for noise in ("TracerWarning", "Warning:", "Traceback", "Loading weights"):
        assert noise not in output, output[-3000:]
    # The warm-up is told once per web process, at INFO, and so is its end.
    messages = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    warming = [m for m in messages if m["message"].startswith("warming up")]
    assert len(warming) == 2 and {m["level"] for m in warming} == {"INFO"}
    assert sum(m["message"].startswith("warm-up finished") for m in messages) == 2
