"""Small helpers for settings that must not live in the repository."""

from __future__ import annotations

import secrets
from pathlib import Path


def local_secret_key(var_dir: Path) -> str:
    """A per-installation SECRET_KEY generated once and kept in var/ (mode 600)."""
    path = var_dir / "secret_key"
    if not path.exists():
        var_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(secrets.token_urlsafe(50))
        tmp.chmod(0o600)
        tmp.replace(path)  # atomic: concurrent first starts agree on one key
    return path.read_text().strip()
