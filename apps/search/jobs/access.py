"""Access statistics (`last_accessed_at`, `access_count`) derived from the search log.

A memory is *accessed* when a search returns it (it is in that QueryLog's `results`). The decay
job folds new QueryLogs into the two columns before it computes stability. A JobCursor remembers
up to which `created_at` the namespace's logs were counted and moves in the same transaction as
the counts, so every log is counted exactly once however runs overlap or fail. Logs younger than
LAG are left for the next run: QueryLogs are written off the search's hot path, so one created a
moment ago might commit after a later one.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction

from apps.jobs.models import Job, JobCursor
from apps.memories.models import Memory, Namespace

from ..models import QueryLog

LAG = timedelta(seconds=60)
UUID_RE = "^[0-9a-fA-F-]{36}$"


def accesses_record(*, namespace: Namespace, now: datetime) -> list[Any]:
    """Count accesses logged since the cursor; returns the ids of the memories touched."""
    until = now - LAG
    with transaction.atomic():
        cursor_row = (
            JobCursor.objects.select_for_update().filter(job=Job.DECAY, namespace=namespace).first()
        )
        since = cursor_row.position if cursor_row else None
        if since is not None and since >= until:
            return []
        sql = f"""
            WITH hits AS (
                SELECT (r.value->>'id')::uuid AS id, count(*) AS n, max(q.created_at) AS last
                FROM {QueryLog._meta.db_table} AS q
                CROSS JOIN LATERAL jsonb_array_elements(
                    CASE WHEN jsonb_typeof(q.results) = 'array' THEN q.results ELSE '[]' END
                ) AS r(value)
                WHERE q.namespace_id = %(ns)s AND q.created_at <= %(until)s
                  AND (%(since)s::timestamptz IS NULL OR q.created_at > %(since)s)
                  AND r.value->>'id' ~ %(uuid_re)s
                GROUP BY 1
            )
            UPDATE {Memory._meta.db_table} AS m
            SET access_count = m.access_count + hits.n,
                last_accessed_at = greatest(m.last_accessed_at, hits.last)
            FROM hits WHERE m.id = hits.id AND m.namespace_id = %(ns)s
            RETURNING m.id
        """
        params: dict[str, Any] = {
            "ns": namespace.pk,
            "until": until,
            "since": since,
            "uuid_re": UUID_RE,
        }
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            touched = [row[0] for row in cursor.fetchall()]
        JobCursor.objects.update_or_create(
            job=Job.DECAY, namespace=namespace, defaults={"position": until}
        )
    return touched
