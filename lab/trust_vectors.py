"""Sentence embeddings of the texts the risk check's scorer is fitted and scored on, encoded
once and kept under var/ (the encoder costs a few milliseconds a text on a 2-core machine; the
cross-validation reads the same ten thousand texts many times).

The vectors are the write path's: the configured model, unit length, of the whole text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from django.conf import settings

from apps.vectors import embeddings
from apps.vectors.encoder_settings import EncoderSettings

CACHE = Path(settings.BASE_DIR) / "var" / "trust_vectors.npz"


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


class Vectors:
    """text -> its vector, from the cache file or the encoder (then saved)."""

    def __init__(self, path: Path = CACHE):
        self.path = path
        self.known: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path) as saved:
                self.known = dict(zip(saved["keys"].tolist(), saved["vectors"], strict=True))

    def of(self, texts: Sequence[str]) -> np.ndarray:
        keys = [_key(t) for t in texts]
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.known}
        missing = list(todo.items())
        if missing:
            encoded = embeddings.embed_texts([t for _, t in missing])
            self.known.update({k: v for (k, _), v in zip(missing, encoded, strict=True)})
            self._save()
        dim = EncoderSettings.current().dim
        if not keys:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([self.known[k] for k in keys]).astype(np.float32)

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self.known)
        np.savez(self.path, keys=np.array(keys), vectors=np.stack([self.known[k] for k in keys]))
