"""The encoder backends give vectors of the same model, so stored embeddings stay valid."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from apps.vectors import embeddings
from apps.vectors.embeddings import (
    EmbeddingModelError,
    EmbeddingTimeout,
    embed_query,
    embed_texts,
    model_info,
)

TEXTS = [
    "We decided to move the nightly backup to 02:00 UTC.",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Never run migrations against production without a snapshot first.",
    "ok",
    "The retry loop in the payment client doubles its delay up to thirty seconds, then gives "
    "up and raises; callers must treat that as a failed charge, not a pending one. " * 3,
]


def _has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def _vectors(settings, backend: str) -> np.ndarray:
    settings.EMBEDDING_BACKEND = backend
    return embed_texts(TEXTS)


def test_onnx_vectors_match_torch(settings):
    torch_vectors = _vectors(settings, "torch")
    onnx_vectors = _vectors(settings, "onnx")
    cosines = (torch_vectors * onnx_vectors).sum(axis=1)
    assert cosines.min() > 0.9999


def test_int8_vectors_stay_close_to_torch(settings):
    torch_vectors = _vectors(settings, "torch")
    int8_vectors = _vectors(settings, "onnx-int8")
    cosines = (torch_vectors * int8_vectors).sum(axis=1)
    assert cosines.min() > 0.97 and cosines.mean() > 0.98


@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_batches_keep_order_and_match_single_texts(settings, backend):
    """Batches are sorted by length inside the encoder; callers get their own order back."""
    settings.EMBEDDING_BACKEND = backend
    batch = embed_texts(TEXTS * 3)  # more than the batcher takes: the direct batch path
    singles = np.vstack([embed_texts([t]) for t in TEXTS])
    assert np.allclose(batch[: len(TEXTS)], singles, atol=1e-4)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)


def test_concurrent_queries_get_their_own_vectors(settings):
    """Queries from many threads share one batcher; each caller gets its own text's vector."""
    settings.EMBEDDING_BACKEND = "onnx"
    texts = [f"what did we decide about topic number {i}?" for i in range(24)]
    expected = embed_texts(texts)
    with ThreadPoolExecutor(max_workers=12) as pool:
        got = list(pool.map(lambda t: embed_texts([t])[0], texts))
    assert np.allclose(np.vstack(got), expected, atol=1e-4)
    assert np.allclose(embed_query(texts[0]), expected[0], atol=1e-4)


def test_unknown_backend_is_refused(settings):
    settings.EMBEDDING_BACKEND = "tensorflow"
    with pytest.raises(EmbeddingModelError, match="EMBEDDING_BACKEND"):
        model_info()


def test_search_queries_can_use_their_own_backend(settings):
    """EMBEDDING_QUERY_BACKEND changes the vectors searches are made with and nothing else:
    memories are still stored with EMBEDDING_BACKEND's vectors."""
    settings.EMBEDDING_BACKEND = "onnx"
    settings.EMBEDDING_QUERY_BACKEND = ""
    query = TEXTS[1]
    stored_before = embed_texts([query])[0]
    plain_query = embed_query(query)
    settings.EMBEDDING_QUERY_BACKEND = "onnx-int8"
    int8_query = embed_query(query)
    settings.EMBEDDING_BACKEND = "onnx-int8"
    settings.EMBEDDING_QUERY_BACKEND = ""
    int8_stored = embed_texts([query])[0]
    settings.EMBEDDING_BACKEND = "onnx"
    settings.EMBEDDING_QUERY_BACKEND = "onnx-int8"
    assert np.allclose(embed_texts([query])[0], stored_before, atol=1e-5)
    assert np.allclose(plain_query, stored_before, atol=1e-4)
    assert np.allclose(int8_query, int8_stored, atol=1e-4)
    assert not np.allclose(int8_query, plain_query, atol=1e-3)


def test_torch_on_the_cpu_gives_the_onnx_encoders_vectors_and_passages(settings):
    """The torch backend (the one a GPU runs) keeps the CPU encoder's vectors: texts and
    passages within 1e-4 cosine of ONNX's."""
    from apps.memories.passages import passage_spans
    from apps.vectors.embeddings import embed_with_passages

    spans = [passage_spans("", t) for t in TEXTS]
    settings.EMBEDDING_BACKEND = "onnx"
    onnx_vectors, onnx_passages = embed_with_passages(TEXTS * 3, spans * 3)
    settings.EMBEDDING_BACKEND = "torch"
    settings.EMBEDDING_DEVICE = "cpu"
    torch_vectors, torch_passages = embed_with_passages(TEXTS * 3, spans * 3)
    assert model_info()["device"] == "cpu"
    assert (onnx_vectors * torch_vectors).sum(axis=1).min() > 0.9999
    pairs = [
        (a, b)
        for p, q in zip(onnx_passages, torch_passages, strict=True)
        for a, b in zip(p, q, strict=True)
    ]
    assert pairs and min(float(a @ b) for a, b in pairs) > 0.9999


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU")
def test_a_gpu_asked_for_on_a_machine_without_one_fails_at_start_up(settings):
    settings.EMBEDDING_BACKEND = "torch"
    settings.EMBEDDING_DEVICE = "cuda"
    with pytest.raises(EmbeddingModelError, match="EMBEDDING_DEVICE=cuda .*no CUDA GPU"):
        embeddings.warm()
    settings.EMBEDDING_DEVICE = "auto"  # auto falls back to the CPU
    embeddings.warm()
    assert model_info()["device"] == "cpu"


def test_a_gpu_is_refused_for_the_cpu_only_backends_and_unknown_devices(settings):
    settings.EMBEDDING_BACKEND = "onnx"
    settings.EMBEDDING_DEVICE = "cuda"
    with pytest.raises(EmbeddingModelError, match="EMBEDDING_BACKEND=torch"):
        embeddings.warm()
    settings.EMBEDDING_DEVICE = "tpu"
    with pytest.raises(EmbeddingModelError, match="EMBEDDING_DEVICE='tpu'"):
        embeddings.warm()
    settings.EMBEDDING_DEVICE = "auto"
    assert model_info()["device"] == "cpu"


def test_unknown_query_backend_is_refused(settings):
    settings.EMBEDDING_QUERY_BACKEND = "tensorflow"
    with pytest.raises(EmbeddingModelError, match="EMBEDDING_QUERY_BACKEND"):
        embed_query("which backend?")


@pytest.mark.parametrize("backend", ["torch", "onnx", "onnx-int8"])
def test_every_backend_gives_passage_vectors_with_the_texts_own(settings, backend):
    """Passages come with their text's vector from one call on every backend (pooled from the
    same run's token outputs), in the caller's order, batched or not."""
    from apps.memories.passages import passage_spans, passage_texts
    from apps.vectors.embeddings import embed_with_passages

    settings.EMBEDDING_BACKEND = backend
    texts = [TEXTS[1], TEXTS[4], "Ana: First I fixed the tap. Then I painted the fence."]
    spans = [passage_spans("", t) for t in texts]
    assert [len(s) for s in spans] == [0, 3, 2]
    vectors, passages = embed_with_passages(texts, spans)  # small: through the batcher
    assert np.allclose(vectors, embed_texts(texts), atol=1e-4)
    assert [len(p) for p in passages] == [0, 3, 2]
    fence = embed_query("painting the fence")
    fixed, painted = passages[2]
    assert float(painted @ fence) > max(float(fixed @ fence), float(vectors[2] @ fence))
    alone = embed_texts(passage_texts("", texts[2]))
    assert float(alone[1] @ painted) > 0.7
    big_vectors, big_passages = embed_with_passages(texts * 3, spans * 3)  # the batch path
    assert np.allclose(big_vectors[:3], vectors, atol=1e-4)
    for got, want in zip(big_passages[2], passages[2], strict=True):
        assert float(got @ want) > 0.999


def _stall_encoder(monkeypatch, effect):
    """Make the loaded encoder's next calls do `effect` instead of encoding."""
    encoder = embeddings.get_model()
    monkeypatch.setattr(encoder, "encode_spans", lambda *a, **kw: effect())


def test_an_encoder_that_dies_fails_its_callers_and_the_batcher_lives_on(settings, monkeypatch):
    """A BaseException (here SystemExit) inside the encoder would end the batcher thread and
    leave every later caller waiting forever; instead the callers get an error and the next
    call is served."""
    settings.EMBEDDING_BACKEND = "onnx"
    expected = embed_texts(["the nightly backup moved to 02:00"])

    def die():
        raise SystemExit("killed mid-batch")

    _stall_encoder(monkeypatch, die)
    with pytest.raises(EmbeddingModelError, match="killed mid-batch"):
        embed_texts(["the nightly backup moved to 02:00"])
    monkeypatch.undo()
    assert np.allclose(embed_texts(["the nightly backup moved to 02:00"]), expected, atol=1e-5)


def test_a_stuck_encoder_times_out_instead_of_hanging(settings, monkeypatch, caplog):
    settings.EMBEDDING_BACKEND = "onnx"
    settings.EMBEDDING_RESULT_TIMEOUT_S = 0.3
    embed_texts(["loaded"])
    _stall_encoder(monkeypatch, lambda: time.sleep(1.5))
    with pytest.raises(EmbeddingTimeout, match="no answer within 0.3 s"):
        embed_texts(["a write that meets a stuck encoder"])
    # the log says where the encoder was stuck: here, in the stall this test put in its place
    stuck = [r.getMessage() for r in caplog.records if "batcher thread was at" in r.getMessage()]
    assert stuck and "_stall_encoder" in stuck[0], stuck


def test_signals_at_the_batcher_thread_never_leave_a_caller_waiting(settings):
    """CI saw a write wait 120 s on a batcher that sat in its 1 ms batching window: Python
    3.11's SimpleQueue.get(timeout), interrupted past its deadline, waits for the next put
    instead of giving up. Here signals rain on the batcher thread while writes are served."""
    settings.EMBEDDING_BACKEND = "onnx"
    settings.EMBEDDING_RESULT_TIMEOUT_S = 10
    embed_texts(["loaded"])
    batcher = embeddings._load(embeddings.EncoderSettings.current())[1]
    previous = signal.signal(signal.SIGUSR1, lambda *args: None)
    stop = threading.Event()

    def rain():
        while not stop.is_set():
            signal.pthread_kill(batcher._thread.ident, signal.SIGUSR1)
            time.sleep(0.0002)

    rainer = threading.Thread(target=rain, daemon=True)
    rainer.start()
    try:
        for n in range(40):
            assert embed_texts([f"write number {n} while signals arrive"]).shape[0] == 1
    finally:
        stop.set()
        rainer.join()
        signal.signal(signal.SIGUSR1, previous)


def test_a_forked_child_embeds_with_its_own_encoder(settings):
    """Celery's prefork pool forks a parent that may have loaded the model; the child has none
    of the parent's threads, so it must load its own encoder instead of queueing jobs for a
    batcher thread that does not exist there."""
    settings.EMBEDDING_BACKEND = "onnx"
    expected = embed_texts(["forked workers encode too"])[0]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: encode, report, leave without running pytest's teardown
        code = 1
        try:
            signal.alarm(60)
            got = embed_texts(["forked workers encode too"])[0]
            os.write(write, got.astype(np.float32).tobytes())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    deadline = time.monotonic() + 90
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child never got its vector")
        time.sleep(0.1)
    with os.fdopen(read, "rb") as pipe:
        got = np.frombuffer(pipe.read(), dtype=np.float32)
    assert os.waitstatus_to_exitcode(done[1]) == 0
    assert np.allclose(got, expected, atol=1e-5)
