"""Rows that are already odd in the database, inserted by SQL as an older version, a migration
gone wrong or another tool could have left them: what no door lets in any more, and what the
read side must still show without failing (apps.core.readside)."""

from __future__ import annotations

import uuid

from django.db import connection

from apps.memories.models import Namespace

DEEP_JSON = "[" * 3000 + "]" * 3000
POISON: dict[str, dict[str, str]] = {
    # instants Python cannot hold, or that overflow date arithmetic
    "created_far_future": {"created_at": "'9999-12-31 23:59:59-14'"},
    "created_infinity": {"created_at": "'infinity'"},
    "created_minus_infinity": {"created_at": "'-infinity'"},
    "created_bc": {"created_at": "'0044-03-15 BC'"},
    "created_year_1": {"created_at": "'0001-01-01 00:00:00+00'"},
    "updated_infinity": {"updated_at": "'infinity'"},
    "accessed_year_20000": {"last_accessed_at": "'20000-01-01'"},
    # JSON Python cannot read, or that is not the object the code expects
    "metadata_too_deep": {"metadata": f"'{{\"deep\": {DEEP_JSON}}}'::jsonb"},
    "metadata_5000_digits": {"metadata": '\'{"n": 1' + "0" * 5000 + "}'::jsonb"},
    "metadata_list": {"metadata": "'[1, 2, 3]'::jsonb"},
    "metadata_text": {"metadata": "'\"text\"'::jsonb"},
    "metadata_number": {"metadata": "'5'::jsonb"},
    "metadata_json_null": {"metadata": "'null'::jsonb"},
    "metadata_odd_chunk": {
        "metadata": '\'{"chunk_index": "x", "document_id": 5, "chunk_count": -1}\'::jsonb'
    },
    "metadata_huge_chunk": {
        "metadata": '\'{"chunk_index": 1e300, "document_id": "not-a-uuid"}\'::jsonb'
    },
    # text and other columns
    "content_2mb": {"content": "repeat('poison row huge text ', 100000)"},
    "content_controls": {
        "content": "E'poison row \\x01\\x1b[31m \\u202e <script>alert(1)</script> {{7*7}}'"
    },
    "trigger_null_item": {"trigger_phrases": "ARRAY[NULL, 'x']::varchar[]"},
    "embedding_zero": {"embedding": "array_fill(0, ARRAY[384])::vector"},
    "embedding_null": {"embedding": "NULL"},
    "access_count_max": {"access_count": "2147483647"},
}


def insert_poison_rows(namespace: Namespace) -> dict[str, str]:
    """One row per kind of poison in `namespace`, by SQL; returns {title: id}."""
    ids = {}
    with connection.cursor() as cursor:
        for name, columns in POISON.items():
            memory_id = str(uuid.uuid4())
            row = {
                "id": f"'{memory_id}'",
                "created_at": "now()",
                "updated_at": "now()",
                "namespace_id": str(namespace.pk),
                "title": f"'{name}'",
                "content": f"'poison row {name.replace('_', ' ')}'",
                "category": "'note'",
                "file_path": "''",
                "source": "'sql'",
                "trigger_phrases": "'{}'",
                "tier": "'normal'",
                "importance": "0.5",
                "pagerank_score": "0",
                "stability": "1",
                "access_count": "0",
                "embedding": "array_fill(0.05, ARRAY[384])::vector",
                "embedding_model": "''",
                "content_hash": f"md5('{name}')",
                "archived": "false",
                "metadata": "'{}'",
                **columns,
            }
            cursor.execute(
                f"INSERT INTO memories_memory ({', '.join(row)}) VALUES ({', '.join(row.values())})"
            )
            ids[name] = memory_id
    return ids
