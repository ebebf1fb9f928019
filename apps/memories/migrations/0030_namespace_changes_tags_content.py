"""The namespace change log (0029) also records what the kept rows now carry: a memory's text
(whether it ends with a question mark) and its tag names.

A search keeps a small namespace's memories in the process (apps/search/pipeline/reads/
namespace_vectors.py) and now reads their tag names and question marks from there too, so the
log must move when either changes: an UPDATE of a memory's content, a tag link added or
removed (Django's many-to-many writes, a tag's deletion), and a tag renamed. Statement-level
triggers, one log row per statement and namespace, as in 0029.
"""

from django.db import migrations

LOG = "memories_namespacechange"
SEARCHED = "embedding, archived, review, valid_from, valid_until, created_at, namespace_id"
WITH_CONTENT = SEARCHED + ", content"


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


FORWARD = (
    _changed_memories(WITH_CONTENT)
    + f"""
-- A link's memory names the namespace (a link whose memory is gone with it: the memory's own
-- deletion logged that).
CREATE FUNCTION memoryhub_log_tag_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO {LOG} (namespace_id)
        SELECT DISTINCT m.namespace_id FROM new_rows l JOIN memories_memory m ON m.id = l.memory_id;
    ELSE
        INSERT INTO {LOG} (namespace_id)
        SELECT DISTINCT m.namespace_id FROM old_rows l JOIN memories_memory m ON m.id = l.memory_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER tag_link_changes_insert AFTER INSERT ON memories_memory_tags
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memoryhub_log_tag_links();
CREATE TRIGGER tag_link_changes_delete AFTER DELETE ON memories_memory_tags
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memoryhub_log_tag_links();

-- A renamed tag: every namespace with a memory that carries it.
CREATE FUNCTION memoryhub_log_tag_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {LOG} (namespace_id)
    SELECT DISTINCT m.namespace_id
      FROM new_rows n JOIN old_rows o ON o.id = n.id
      JOIN memories_memory_tags l ON l.tag_id = n.id
      JOIN memories_memory m ON m.id = l.memory_id
     WHERE n.name IS DISTINCT FROM o.name;
    RETURN NULL;
END $$;

CREATE TRIGGER tag_changes_update AFTER UPDATE ON memories_tag
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memoryhub_log_tag_renamed();
"""
)

BACKWARD = """
DROP TRIGGER IF EXISTS tag_changes_update ON memories_tag;
DROP TRIGGER IF EXISTS tag_link_changes_delete ON memories_memory_tags;
DROP TRIGGER IF EXISTS tag_link_changes_insert ON memories_memory_tags;
DROP FUNCTION IF EXISTS memoryhub_log_tag_renamed();
DROP FUNCTION IF EXISTS memoryhub_log_tag_links();
""" + _changed_memories(SEARCHED)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0029_namespace_changes"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
