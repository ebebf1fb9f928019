"""Credentials in text already stored: each row's findings, with progress for a long scan."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from .secrets import Secret, find_secrets


@dataclass(frozen=True)
class Progress:
    scanned: int
    holding: int  # rows with at least one secret so far
    seconds: float

    @property
    def rate(self) -> float:
        return self.scanned / self.seconds if self.seconds else 0.0


def scan_rows(
    rows: Iterable[tuple[object, str]],
    *,
    progress: Callable[[Progress], None] | None = None,
    every: int = 1000,
) -> Iterator[tuple[object, list[Secret]]]:
    """(key, secrets) for each row whose text holds a credential; `progress` every `every` rows
    and once at the end."""
    started = time.monotonic()
    scanned = holding = 0
    for key, text in rows:
        found = find_secrets(text)
        scanned += 1
        if found:
            holding += 1
            yield key, found
        if progress and scanned % every == 0:
            progress(Progress(scanned, holding, time.monotonic() - started))
    if progress:
        progress(Progress(scanned, holding, time.monotonic() - started))


def describe(secret: Secret) -> str:
    """What a report prints: the kind and the place, never the value."""
    return f"{secret.kind} at characters {secret.start + 1}-{secret.end}"
