"""Vectors of a benchmark text set, computed once by the configured encoder and kept on disk.

Filling 413k or 1M memories runs the model over every text; a second fill of the same texts
(another size, the namespace spread, the 1M extension) re-uses those vectors instead of paying
the model again. Each chunk file records the model, backend and a digest of its texts, so a
cache made by another model or from other texts is never used.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from apps.memories.embedding_input import embedding_text
from apps.vectors import embeddings

CHUNK = 4096


def _digest(texts: list[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:16]


def _tag() -> str:
    conf = embeddings.EncoderSettings.current()
    return f"{conf.model}|{conf.backend}"


def chunk_path(cache: Path, start: int) -> Path:
    return cache / f"vectors-{start:08d}.npy"


def build(texts: list[str], cache: Path, *, limit: int | None = None, log=sys.stderr) -> int:
    """Encode (and store) every chunk not cached yet, up to `limit` texts; returns how many
    texts have cached vectors. Safe to stop and run again: finished chunks are kept."""
    cache.mkdir(parents=True, exist_ok=True)
    end = min(len(texts), limit or len(texts))
    done, started = 0, time.perf_counter()
    for start in range(0, end, CHUNK):
        part = texts[start : start + CHUNK]
        path = chunk_path(cache, start)
        meta = path.with_suffix(".json")
        want = {"tag": _tag(), "digest": _digest(part), "count": len(part)}
        if path.exists() and meta.exists() and json.loads(meta.read_text()) == want:
            continue
        vectors = embeddings.embed_texts([embedding_text("", t) for t in part])
        np.save(path, vectors.astype(np.float32))
        meta.write_text(json.dumps(want))
        done += len(part)
        rate = done / (time.perf_counter() - started)
        log.write(f"vectors: {start + len(part):,}/{end:,} ({rate:.0f} texts/s)\n")
        log.flush()
    return end


def load(texts: list[str], cache: Path) -> np.ndarray | None:
    """Vectors for `texts` (row i for text i) if the cache holds all of them, else None."""
    out = np.empty((len(texts), embeddings.EncoderSettings.current().dim), dtype=np.float32)
    for start in range(0, len(texts), CHUNK):
        part = texts[start : start + CHUNK]
        path = chunk_path(cache, start)
        meta = path.with_suffix(".json")
        if not (path.exists() and meta.exists()):
            return None
        want = {"tag": _tag(), "digest": _digest(part), "count": len(part)}
        if json.loads(meta.read_text()) != want:
            return None
        out[start : start + len(part)] = np.load(path)
    return out
