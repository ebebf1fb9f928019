"""Real-shaped files from the tools people move from, for the import tests.

The markdown notes and the mem0 export are committed under tests/fixtures/transfer/. The
mcp-memory-service database is built here with the schema its SQLite-vec storage creates
(table `memories`: content_hash, content, comma-separated tags, memory_type, JSON metadata,
epoch created_at/updated_at plus their ISO copies, deleted_at for soft deletes; table
`memory_graph` for links between content hashes, with relationship_type).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zipfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transfer"
MEM0_EXPORT = FIXTURES / "mem0_export.json"

MCP_MEMORIES = [
    # content, tags, memory_type, metadata, created_at (epoch seconds)
    (
        "Use the connection pool for every database call in the API workers",
        "python,database,performance",
        "decision",
        {"project": "api"},
        1717236000.5,
    ),
    (
        "Timeouts in the API came from exhausting the database connections",
        "bug,database",
        "error",
        {},
        1717149600.0,
    ),
    (
        "Weekly sync moved to Tuesdays",
        "meeting",
        "observation",
        {"source": "calendar"},
        1717322400.0,
    ),
]
MCP_DELETED = "This memory was deleted in mcp-memory-service and must not come back"


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def markdown_zip(path: Path) -> Path:
    """A zip of a basic-memory note, an Obsidian daily note and a CLAUDE.md file."""
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted((FIXTURES / "notes").rglob("*.md")):
            archive.write(file, file.relative_to(FIXTURES / "notes").as_posix())
    return path


def mcp_memory_service_db(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            content_hash TEXT UNIQUE NOT NULL,
            content TEXT NOT NULL,
            tags TEXT,
            memory_type TEXT,
            metadata TEXT,
            created_at REAL,
            updated_at REAL,
            created_at_iso TEXT,
            updated_at_iso TEXT,
            deleted_at REAL DEFAULT NULL
        );
        CREATE TABLE memory_graph (
            source_hash TEXT NOT NULL,
            target_hash TEXT NOT NULL,
            similarity REAL NOT NULL,
            connection_types TEXT NOT NULL,
            metadata TEXT,
            created_at REAL NOT NULL,
            relationship_type TEXT DEFAULT 'related',
            PRIMARY KEY (source_hash, target_hash)
        );
        """
    )
    rows = [(*m, None) for m in MCP_MEMORIES] + [(MCP_DELETED, "", "note", {}, 1717000000.0, 1.0)]
    for content, tags, kind, metadata, created, deleted in rows:
        db.execute(
            "INSERT INTO memories (content_hash, content, tags, memory_type, metadata, created_at,"
            " updated_at, created_at_iso, updated_at_iso, deleted_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, datetime(?, 'unixepoch'), datetime(?, 'unixepoch'), ?)",
            (
                _hash(content),
                content,
                tags,
                kind,
                json.dumps(metadata),
                created,
                created + 60,
                created,
                created + 60,
                deleted,
            ),
        )
    db.execute(
        "INSERT INTO memory_graph VALUES (?, ?, 0.82, '[\"causal\"]', '{}', 1717236100, 'causes')",
        (_hash(MCP_MEMORIES[1][0]), _hash(MCP_MEMORIES[0][0])),
    )
    db.execute(
        "INSERT INTO memory_graph VALUES (?, ?, 0.5, '[]', '{}', 1717236100, 'related')",
        (_hash(MCP_MEMORIES[0][0]), _hash(MCP_DELETED)),
    )
    db.commit()
    db.close()
    return path


def mcp_hash(content: str) -> str:
    return _hash(content)
