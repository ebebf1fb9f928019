"""Readers for the files people bring from other tools; each turns a file into neutral records.

A reader returns `[(label, record)]`: the record is in the neutral format of transfer.py (without
"namespace": the import puts every record into the namespace it was asked to), the label says
where in the file the record came from ("line 3", "notes/a.md", "row 12") so a problem can be
reported as "label: field: problem". The formats, as their projects document them:

- `jsonl`: memoryhub's neutral format, one JSON object per line.
- `markdown`: a zip of .md files (basic-memory or Obsidian notes, CLAUDE.md-style files). Front
  matter (YAML between `---` lines) gives title, tags (a list or a comma/space separated string),
  aliases and the rest, kept in metadata. A note becomes one memory per heading section; the
  path inside the zip is the file path. A file memoryhub exported (front matter `memoryhub: 1`)
  is one memory with every field restored.
- `mcp_memory_service`: the SQLite database file of doobidoo/mcp-memory-service (table
  `memories`: content, content_hash, comma-separated tags, memory_type, JSON metadata, epoch
  created_at/updated_at, deleted_at for soft deletes; table `memory_graph` for its links).
- `mem0`: a mem0 JSON export: the `get_all` answer (`{"results": [...]}`) or a plain list of
  memories with `id`, `memory` (the text), `metadata`, `categories`, `created_at`,
  `updated_at`, `user_id` / `agent_id` / `run_id`.
"""

from __future__ import annotations

import json
import posixpath
import re
import sqlite3
import time
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings

from apps.core.exceptions import ValidationFailed
from apps.memories.chunking import chunk_by_heading
from apps.memories.models import Category
from apps.memories.tags import TAG_NAME_RE, normalize_tag

from .unpacking import UnpackRefused, as_text, unpack_member

# A record in the neutral format (transfer.py): JSON values by field name.
Record = dict[str, Any]
Labelled = list[tuple[str, Record]]


class UnreadableLines(ValidationFailed):
    """Lines that are not records, raised with the records that could be read, so the import
    checks those too and one report names every line to fix (transfer.read_records)."""

    def __init__(self, errors: dict[str, str], readable: Labelled) -> None:
        super().__init__(errors)
        self.readable = readable


FORMATS = {
    "jsonl": "memoryhub JSONL (neutral format)",
    "markdown": "Markdown notes (zip: basic-memory, Obsidian, CLAUDE.md)",
    "mcp_memory_service": "mcp-memory-service SQLite database",
    "mem0": "mem0 JSON export",
}

SQLITE_MAGIC = b"SQLite format 3\x00"
NESTED_TOO_DEEPLY = "Nested too deeply to read (JSON arrays or objects inside each other)."


def detect(path: Path, filename: str = "") -> str:
    """The format of an uploaded file, from its first bytes and then its name."""
    with open(path, "rb") as handle:
        head = handle.read(16)
    if head.startswith(SQLITE_MAGIC):
        return "mcp_memory_service"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "markdown"
    name = filename.lower()
    if name.endswith(".json"):
        return "mem0"
    stripped = head.lstrip()
    if stripped.startswith(b"[") or name.endswith(".json"):
        return "mem0"
    return "jsonl"


def read(path: Path, fmt: str) -> Labelled:
    readers: dict[str, Callable[[Path], Labelled]] = {
        "jsonl": read_jsonl_labelled,
        "markdown": read_markdown_zip,
        "mcp_memory_service": read_mcp_memory_service,
        "mem0": read_mem0,
    }
    if fmt not in readers:
        raise ValidationFailed({"format": f"Must be one of: {', '.join(readers)}."})
    return readers[fmt](Path(path))


# ---------------------------------------------------------------- neutral JSONL


def read_jsonl_labelled(path: Path) -> Labelled:
    """Every line; all bad lines are reported together, not only the first."""
    out: Labelled = []
    errors: dict[str, str] = {}
    # utf-8-sig: a byte order mark (Windows editors write one) is not part of the first line.
    with open(path, encoding="utf-8-sig", errors="strict") as handle:
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    errors[f"line {number}"] = f"Not valid JSON: {exc.msg}."
                    continue
                except RecursionError:
                    errors[f"line {number}"] = NESTED_TOO_DEEPLY
                    continue
                if not isinstance(record, dict):
                    errors[f"line {number}"] = "Must be a JSON object."
                    continue
                out.append((f"line {number}", record))
        except UnicodeDecodeError as exc:
            raise ValidationFailed({"file": "Is not UTF-8 text."}) from exc
    if errors:
        raise UnreadableLines(errors, out)
    return out


# ---------------------------------------------------------------- markdown zip

FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
H1_RE = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)
INLINE_TAG_RE = re.compile(r"(?:(?<=\s)|^)#([A-Za-z][\w/-]{0,62})\b")
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
# Fields a memoryhub markdown export writes into front matter, restored as they are.
EXACT_FIELDS = (
    "id",
    "title",
    "category",
    "tags",
    "created_at",
    "updated_at",
    "file_path",
    "source",
    "trigger_phrases",
    "tier",
    "importance",
    "archived",
    "metadata",
    "edges",
    "provenance",
)


def split_front_matter(text: str) -> tuple[Record, str, str | None]:
    """(front matter, body, problem); a front matter that is not a YAML mapping is a problem."""
    match = FRONT_MATTER_RE.match(text)
    if not match:
        return {}, text, None
    try:
        data = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        return {}, text, f"Front matter is not valid YAML ({exc.__class__.__name__})."
    if not isinstance(data, dict):
        return {}, text, "Front matter must be a mapping of keys to values."
    return _plain(data), text[match.end() :], None


def _plain(value: Any) -> Any:
    """YAML dates and other objects as JSON-friendly values (metadata must be JSON)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "isoformat"):  # date
        return value.isoformat()
    return value


def _tag_list(raw: object) -> list[str]:
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else re.split(r"[,\s]+", str(raw))
    tags = []
    for item in items:
        name = normalize_tag(str(item).lstrip("#"))
        if name and TAG_NAME_RE.match(name) and name not in tags:
            tags.append(name)
    return tags


def read_markdown_zip(path: Path) -> Labelled:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ValidationFailed({"file": f"Is not a readable zip file ({exc})."}) from exc
    out: Labelled = []
    errors: dict[str, str | list[str]] = {}  # a note's own problems come as lists
    budget = settings.IMPORT_MAX_UNPACKED_BYTES
    left = [budget]
    with archive:
        infos = [
            i
            for i in archive.infolist()
            if not i.is_dir()
            and i.filename.lower().endswith(MARKDOWN_SUFFIXES)
            and not any(
                part.startswith(".") or part == "__MACOSX" for part in i.filename.split("/")
            )
        ]
        if not infos:
            raise ValidationFailed({"file": "The zip holds no markdown (.md) files."})
        if sum(i.file_size for i in infos) > budget:
            raise ValidationFailed(
                {"file": f"Unpacks to more than {budget} bytes of markdown; split the zip."}
            )
        for info in sorted(infos, key=lambda i: i.filename):
            name = posixpath.normpath(info.filename).lstrip("/")
            try:
                text = unpack_member(archive, info, left).decode("utf-8-sig")
            except UnicodeDecodeError:
                errors[name] = "Is not UTF-8 text."
                continue
            except UnpackRefused as exc:
                errors[name] = str(exc)
                if exc.stop:
                    break
                continue
            try:
                out.extend(_note_records(name, text))
            except ValidationFailed as exc:
                errors.update(exc.errors)
    if errors:
        raise ValidationFailed(errors)
    return out


def _note_records(name: str, text: str) -> Labelled:
    front, body, problem = split_front_matter(text)
    if problem:
        raise ValidationFailed({f"{name}.front_matter": problem})
    if front.get("memoryhub"):
        record = {k: front[k] for k in EXACT_FIELDS if k in front}
        record["content"] = body.removesuffix("\n")
        return [(name, record)]

    stem = posixpath.splitext(posixpath.basename(name))[0]
    h1 = H1_RE.search(body)
    title = str(front.get("title") or (h1.group(1) if h1 else stem)).strip()
    tags = _tag_list(front.get("tags")) + _tag_list(front.get("tag"))
    tags += [t for t in _tag_list(INLINE_TAG_RE.findall(body)) if t not in tags]
    category = str(front.get("category") or front.get("type") or "").lower()
    if category not in Category.values:
        category = Category.NOTE
    extra = {k: v for k, v in front.items() if k not in {"title", "tags", "tag", "category"}}
    created = front.get("created") or front.get("created_at") or front.get("date")
    chunks = chunk_by_heading(body, settings.MEMORY_CHUNK_MAX_CHARS) if body.strip() else []
    records: Labelled = []
    for chunk in chunks:
        label = f"{name}#{chunk.index + 1}" if len(chunks) > 1 else name
        # The note's own H1 is its title already: "Title > Build", not "Title > Title > Build".
        parts = chunk.title.split(" > ") if chunk.title else []
        if parts and parts[0] == title:
            parts = parts[1:]
        section = " > ".join(parts)
        record = {
            "id": f"{name}#{chunk.index}",
            "title": f"{title} > {section}" if section else title,
            "content": chunk.text,
            "tags": tags,
            "category": category,
            "file_path": name,
            "source": "markdown-import",
            "metadata": {
                "front_matter": extra,
                "section": chunk.title,
                "section_index": chunk.index,
                "sections": len(chunks),
            },
        }
        if created:
            record["created_at"] = str(created)
        records.append((label, record))
    return records


# ---------------------------------------------------------------- mcp-memory-service

# Its memory types (models/ontology.py) onto our categories; the original is kept in metadata.
MCP_TYPES = {
    "decision": Category.DECISION,
    "learning": Category.LEARNING,
    "pattern": Category.PATTERN,
    "error": Category.WARNING,
    "warning": Category.WARNING,
    "fact": Category.FACT,
    "conversation": Category.CONVERSATION,
}
# Its relationship types onto our relations.
MCP_RELATIONS = {"causes": "caused", "contradicts": "contradicts", "supersedes": "supersedes"}


def _epoch(value: Any) -> str | None:
    if value in (None, ""):
        return None
    try:
        return datetime.fromtimestamp(float(value), tz=UTC).isoformat()
    except (TypeError, ValueError, OverflowError, OSError):
        return str(value)  # let the date check name the bad value


def read_mcp_memory_service(path: Path) -> Labelled:
    with open(path, "rb") as handle:
        if not handle.read(16).startswith(SQLITE_MAGIC):
            raise ValidationFailed({"file": "Is not an SQLite database file."})
    # Read-only and immutable: the uploaded copy is never changed, no journal is written.
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as exc:
        raise ValidationFailed({"file": f"Cannot be opened as SQLite: {exc}."}) from exc
    db.row_factory = sqlite3.Row
    # Every statement stops at the deadline: a file can make a query as slow as it likes.
    limit = settings.IMPORT_SQLITE_SECONDS
    deadline = time.monotonic() + limit
    db.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
    try:
        kinds = dict(db.execute("SELECT name, type FROM sqlite_master"))
        if kinds.get("memories", "table") != "table":
            raise ValidationFailed(
                {"file": f"`memories` is a {kinds['memories']}, not a table; only tables are read."}
            )
        columns = {r["name"] for r in db.execute("PRAGMA table_info(memories)")}
        if not {"content", "content_hash"} <= columns:
            raise ValidationFailed(
                {"file": "Has no mcp-memory-service `memories` table (content, content_hash)."}
            )
        where = " WHERE deleted_at IS NULL" if "deleted_at" in columns else ""
        rows = db.execute(f"SELECT * FROM memories{where} ORDER BY created_at, content_hash")
        out: Labelled = []
        by_hash: dict[str, Record] = {}
        for row in rows:
            label = f"row {row['id'] if 'id' in columns else len(out) + 1}"
            try:
                record = _mcp_record(as_text(dict(row), TEXT_COLUMNS))
            except (TypeError, ValueError, AttributeError) as exc:
                raise ValidationFailed({label: f"Cannot be read: {exc}."}) from exc
            by_hash[record["id"]] = record
            out.append((label, record))
        _mcp_edges(db, by_hash)
    except sqlite3.OperationalError as exc:
        if time.monotonic() > deadline:
            raise ValidationFailed(
                {"file": f"Reading it took longer than {limit:g} s; refused (too large or slow)."}
            ) from exc
        raise ValidationFailed({"file": f"Cannot be read as SQLite: {exc}."}) from exc
    except sqlite3.DatabaseError as exc:
        raise ValidationFailed({"file": f"Cannot be read as SQLite: {exc}."}) from exc
    finally:
        db.close()
    return out


TEXT_COLUMNS = ("content", "content_hash", "tags", "memory_type", "metadata")


def _mcp_record(row: dict[str, Any]) -> Record:
    try:
        metadata = json.loads(row.get("metadata") or "{}")
    except (TypeError, ValueError):
        metadata = {"raw": row.get("metadata")}
    if not isinstance(metadata, dict):
        metadata = {"value": metadata}
    memory_type = row.get("memory_type") or ""
    metadata["mcp_memory_service"] = {
        "content_hash": row["content_hash"],
        "memory_type": memory_type,
    }
    record = {
        "id": row["content_hash"],
        "content": row["content"],
        "tags": _tag_list([t for t in (row.get("tags") or "").split(",") if t.strip()]),
        "category": MCP_TYPES.get(memory_type.lower(), Category.NOTE),
        "source": "mcp-memory-service",
        "metadata": metadata,
    }
    created = _epoch(row.get("created_at")) or row.get("created_at_iso")
    updated = _epoch(row.get("updated_at")) or row.get("updated_at_iso")
    if created:
        record["created_at"] = created
    if updated:
        record["updated_at"] = updated
    return record


def _mcp_edges(db: sqlite3.Connection, by_hash: dict[str, Record]) -> None:
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "memory_graph" not in tables:
        return
    columns = {r["name"] for r in db.execute("PRAGMA table_info(memory_graph)")}
    relation = "relationship_type" if "relationship_type" in columns else "NULL"
    for row in db.execute(
        f"SELECT source_hash, target_hash, similarity, {relation} AS rel FROM memory_graph"
    ):
        source, target = row["source_hash"], row["target_hash"]
        if source not in by_hash or target not in by_hash or source == target:
            continue  # a link to a deleted memory goes with it
        try:
            strength = min(max(float(row["similarity"]), 0.0), 1.0)
        except (TypeError, ValueError):
            strength = 1.0
        by_hash[source].setdefault("edges", []).append(
            {
                "target": target,
                "relation": MCP_RELATIONS.get(str(row["rel"] or "").lower(), "relates_to"),
                "strength": strength,
            }
        )


# ---------------------------------------------------------------- mem0


def read_mem0(path: Path) -> Labelled:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ValidationFailed({"file": "Is not UTF-8 text."}) from exc
    except RecursionError as exc:
        raise ValidationFailed({"file": NESTED_TOO_DEEPLY}) from exc
    except json.JSONDecodeError as exc:
        raise ValidationFailed(
            {"file": f"Not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."}
        ) from exc
    items = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValidationFailed(
            {"file": 'Must be a list of mem0 memories or {"results": [...]} (mem0 get_all).'}
        )
    out: Labelled = []
    errors: dict[str, str] = {}
    for number, item in enumerate(items, start=1):
        label = f"item {number}"
        if not isinstance(item, dict):
            errors[label] = "Must be a JSON object."
            continue
        text = item.get("memory", item.get("text", item.get("content")))
        given = item.get("metadata")
        metadata = given if isinstance(given, dict) else {}
        mem0 = {
            k: item[k]
            for k in ("hash", "user_id", "agent_id", "run_id", "app_id", "owner", "categories")
            if item.get(k) is not None
        }
        if mem0:
            metadata = {**metadata, "mem0": mem0}
        record = {
            "content": text,
            "tags": _tag_list(item.get("categories") or []),
            "source": "mem0",
            "metadata": metadata,
        }
        if item.get("id") is not None:
            record["id"] = str(item["id"])
        for field in ("created_at", "updated_at"):
            if item.get(field):
                record[field] = item[field]
        out.append((label, record))
    if errors:
        raise ValidationFailed(errors)
    return out
