"""Credentials in memory text, found before anything is written.

`find_secrets(text)` returns each credential's kind and place; `redact` replaces them with
`[redacted: KIND]`; `refusal(secret)` is the error a writer reads. What counts as a credential,
and what passes, is in `credentials`.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import credentials

__all__ = ["Secret", "find_secrets", "redact", "refusal"]


@dataclass(frozen=True)
class Secret:
    kind: str  # a person's name for it: "AWS access key", "GitHub token", "private key"
    start: int
    end: int


def find_secrets(text: str) -> list[Secret]:
    """Each credential in `text`, in order."""
    return [Secret(f.kind, f.start, f.end) for f in credentials.find(text)]


def redact(text: str, secrets: list[Secret]) -> str:
    """`text` with each secret replaced by `[redacted: KIND]`."""
    for secret in sorted(secrets, key=lambda s: s.start, reverse=True):
        text = f"{text[: secret.start]}[redacted: {secret.kind}]{text[secret.end :]}"
    return text


def refusal(secret: Secret) -> str:
    """The error for a refused write, naming the kind and the place (1-based characters)."""
    return (
        f"content contains a secret ({secret.kind}) at characters {secret.start + 1}-{secret.end};"
        " remove it or store where the secret is kept, not the secret"
    )
