"""Reading what an upload holds without letting it hold the server (apps/transfer/importers.py
uses these): zip members unpacked as counted streams, SQLite values read as the text they
stand for."""

from __future__ import annotations

import zipfile
import zlib
from typing import Any

from django.conf import settings


class UnpackRefused(Exception):
    """A member not unpacked; the message is the problem the import reports for it."""

    def __init__(self, message: str, *, stop: bool = False):
        self.stop = stop  # the whole archive's budget is spent: no use reading further parts
        super().__init__(message)


def unpack_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, left: list[int]) -> bytes:
    """One member's bytes, read as a stream and counted as they come (the sizes a zip declares
    may lie): refused past the per-file budget, the archive's remaining budget (`left`, spent
    here) or a compression ratio no text reaches (a zip bomb)."""
    per_file = settings.IMPORT_MAX_FILE_BYTES
    max_ratio = settings.IMPORT_MAX_COMPRESSION_RATIO
    compressed = max(info.compress_size, 1)
    pieces, size = [], 0
    try:
        with archive.open(info) as member:
            while piece := member.read(64 * 1024):
                size += len(piece)
                if size > per_file:
                    raise UnpackRefused(f"Unpacks to more than {per_file} bytes; split it.")
                if size > left[0]:
                    raise UnpackRefused(
                        f"The zip unpacks to more than {settings.IMPORT_MAX_UNPACKED_BYTES} "
                        "bytes of markdown; split it.",
                        stop=True,
                    )
                if size > 1024 * 1024 and size / compressed > max_ratio:
                    raise UnpackRefused(
                        f"Compressed more than {max_ratio}:1, which no text is; refused as a "
                        "zip bomb."
                    )
                pieces.append(piece)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise UnpackRefused(f"Cannot be unpacked: the zip entry is damaged ({exc}).") from exc
    except (NotImplementedError, RuntimeError) as exc:  # unknown compression, encryption
        raise UnpackRefused(f"Cannot be unpacked: {exc}.") from exc
    left[0] -= size
    return b"".join(pieces)


def as_text(row: dict[str, Any], columns: tuple[str, ...]) -> dict[str, Any]:
    """SQLite keeps any type in any column: a number or blob where text belongs is read as text
    (the content check then names a bad value), never a crash."""
    for name in columns:
        value = row.get(name)
        if isinstance(value, bytes):
            row[name] = value.decode("utf-8", errors="replace")
        elif value is not None and not isinstance(value, str):
            row[name] = str(value)
    return row
