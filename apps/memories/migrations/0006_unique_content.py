"""The same content once per namespace, enforced by the database.

Rows stored twice before this constraint existed (concurrent identical writes raced the
read-then-insert check) are folded as memories_merge folds near-duplicates: per namespace and
content hash the oldest active row is kept, gains the others' tags, and supersedes them; the
others are archived, not deleted, so nothing (edges, feedback, history) is lost.
"""

from django.db import migrations, models

# Duplicate groups among the rows the constraint covers: active, and not a later chunk.
COVERED = """
    NOT m.archived
    AND (NOT m.metadata ? 'chunk_index' OR m.metadata -> 'chunk_index' = '0'::jsonb)
"""

FOLD_DUPLICATES = f"""
CREATE TEMP TABLE memory_duplicate_fold ON COMMIT DROP AS
SELECT id AS other_id, keep_id, namespace_id FROM (
    SELECT m.id, m.namespace_id,
           first_value(m.id) OVER w AS keep_id,
           row_number() OVER w AS position
      FROM memories_memory m
     WHERE {COVERED}
    WINDOW w AS (PARTITION BY m.namespace_id, m.content_hash ORDER BY m.created_at, m.id)
) ranked WHERE position > 1;

INSERT INTO memories_memory_tags (memory_id, tag_id)
SELECT DISTINCT f.keep_id, t.tag_id
  FROM memory_duplicate_fold f JOIN memories_memory_tags t ON t.memory_id = f.other_id
ON CONFLICT DO NOTHING;

INSERT INTO memories_causaledge (namespace_id, source_id, target_id, relation, strength, created_at)
SELECT f.namespace_id, f.keep_id, f.other_id, 'supersedes', 1.0, now()
  FROM memory_duplicate_fold f
ON CONFLICT DO NOTHING;

UPDATE memories_memory m SET archived = true, updated_at = now()
  FROM memory_duplicate_fold f WHERE m.id = f.other_id;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0005_browse_sort_indexes"),
    ]

    operations = [
        migrations.RunSQL(FOLD_DUPLICATES, reverse_sql=migrations.RunSQL.noop),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.UniqueConstraint(
                condition=models.Q(
                    ("archived", False),
                    models.Q(
                        models.Q(("metadata__has_key", "chunk_index"), _negated=True),
                        ("metadata__chunk_index", 0),
                        _connector="OR",
                    ),
                ),
                fields=("namespace", "content_hash"),
                name="memory_ns_content_uniq",
            ),
        ),
    ]
