"""The trust checks of the write path, before anything is stored: credentials refused (or
replaced, by the namespace's secrets policy), the risk check's findings, and whether a write
waits for a person (the namespace's review policy).

apps.trust finds; this module applies the namespace's policies to what it finds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from apps.core.exceptions import ValidationFailed
from apps.trust import risk, secrets

from .models import Namespace, ReviewPolicy, SecretsPolicy
from .validation import MemoryInput

REASON_LIMIT = 500


def without_secrets(
    namespace: Namespace, inputs: Sequence[MemoryInput], prefix: str | None
) -> tuple[list[MemoryInput], dict[int, list[str]]]:
    """The inputs as they may be stored, and the kinds redacted per item.

    Under "refuse" any credential fails the whole write, each offending item named by its
    field ("content", or "items[i].content" in a batch); under "redact" it is replaced by
    `[redacted: KIND]`."""
    kept, redacted, errors = [], {}, {}
    for i, inp in enumerate(inputs):
        found = secrets.find_secrets(inp.content)
        if not found:
            kept.append(inp)
        elif namespace.secrets == SecretsPolicy.REDACT:
            kept.append(replace(inp, content=secrets.redact(inp.content, found)))
            redacted[i] = sorted({s.kind for s in found})
        else:
            field = f"{prefix}[{i}].content" if prefix else "content"
            errors[field] = [secrets.refusal(found[0])]
    if errors:
        raise ValidationFailed(errors)
    return kept, redacted


def has_secrets(text: str) -> bool:
    return bool(secrets.find_secrets(text))


def refusals(text: str) -> list[str]:
    """The error for a text the secrets policy refuses (its first credential); [] if clean."""
    return [secrets.refusal(s) for s in secrets.find_secrets(text)[:1]]


def findings(text: str, *, embedding: np.ndarray | None) -> list[dict]:
    """The risk check's findings as stored on the memory: [{kind, reason, start, end}].
    `embedding` is the vector the write path stores for the memory (its embedding_text), which
    the risk check's scorer reads beside the wording; None reads the wording alone."""
    return [r.as_dict() for r in risk.assess(text, embedding=embedding)]


def hold_reason(namespace: Namespace, found: list[dict], *, actor: Any, imported: bool) -> str:
    """Why this write waits for review, or "" when it takes effect at once.

    Credentials (API tokens, connected apps) are held by the policy; people writing in the UI
    are not (they are the namespace's editors), but the records of a file a person imports
    are, under "flagged". Writes by the server itself (commands, jobs: no actor) never are.
    """
    policy = namespace.review
    if policy == ReviewPolicy.OFF:
        return ""
    credential = hasattr(actor, "held_for_review")
    if policy == ReviewPolicy.ALL and credential and actor.held_for_review:
        return _reasons(found) or "the namespace reviews every write through a token or an app"
    if found and (credential or (imported and actor is not None)):
        return _reasons(found)
    return ""


def _reasons(found: list[dict]) -> str:
    reasons = list(dict.fromkeys(f["reason"] for f in found))
    return "; ".join(reasons)[:REASON_LIMIT]
