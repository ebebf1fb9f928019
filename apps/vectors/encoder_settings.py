"""What the encoder reads from settings, and the error a bad setting or a broken model raises.

Its own module so that embeddings.py (which loads the encoder) and encoders.py (which runs it)
both import it, and neither imports the other's caller.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

BACKENDS = ("torch", "onnx", "onnx-int8")


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
    batch_tokens: int
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
            batch_tokens=settings.EMBEDDING_BATCH_TOKENS,
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
