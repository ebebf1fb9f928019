"""The namespace change log (0029, 0030) also records a change of a memory's external id.

A search now reads the temporal neighbours of a kept namespace's candidates from the process
(apps/search/pipeline/reads/namespace_vectors.py, the timeline): the turns of an imported
session keep the natural order of their external ids there, so an UPDATE of that column must
move the log as the other columns a search reads do.
"""

from django.db import migrations

LOG = "memories_namespacechange"
WITH_CONTENT = (
    "embedding, archived, review, valid_from, valid_until, created_at, namespace_id, content"
)
WITH_EXTERNAL_ID = WITH_CONTENT + ", external_id"


def _changed_memories(columns: str) -> str:
    new = ", ".join("n." + c for c in columns.split(", "))
    old = ", ".join("o." + c for c in columns.split(", "))
    return f"""
CREATE OR REPLACE FUNCTION memoryhub_log_changed_memories() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {LOG} (namespace_id)
    SELECT n.namespace_id FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE ({new}) IS DISTINCT FROM ({old})
    UNION
    SELECT o.namespace_id FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE n.namespace_id IS DISTINCT FROM o.namespace_id;
    RETURN NULL;
END $$;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0030_namespace_changes_tags_content"),
    ]

    operations = [
        migrations.RunSQL(_changed_memories(WITH_EXTERNAL_ID), _changed_memories(WITH_CONTENT))
    ]
