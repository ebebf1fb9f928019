"""A log of the statements that change a namespace's memories or passages, kept by triggers.

A process keeps a small namespace's vectors for the exact semantic scan
(apps/search/pipeline/reads/namespace_vectors.py) and must know, before each search, whether
any process changed them since. Statement-level triggers add one row per statement and
namespace it touched (an UPDATE of memories only when a column a search reads changed: the
embedding, archived, review, validity, created_at, namespace; not the usage counts). Rows
are only inserted, so concurrent writers never wait on each other here.
"""

import django.db.models.deletion
import django.db.models.functions.datetime
from django.db import migrations, models

LOG = "memories_namespacechange"
SEARCHED = "embedding, archived, review, valid_from, valid_until, created_at, namespace_id"

FORWARD = f"""
CREATE FUNCTION memoryhub_log_new_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {LOG} (namespace_id)
    SELECT DISTINCT namespace_id FROM new_rows WHERE namespace_id IS NOT NULL;
    RETURN NULL;
END $$;

CREATE FUNCTION memoryhub_log_old_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {LOG} (namespace_id)
    SELECT DISTINCT namespace_id FROM old_rows WHERE namespace_id IS NOT NULL;
    RETURN NULL;
END $$;

CREATE FUNCTION memoryhub_log_changed_passages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {LOG} (namespace_id)
    SELECT namespace_id FROM new_rows WHERE namespace_id IS NOT NULL
    UNION SELECT namespace_id FROM old_rows WHERE namespace_id IS NOT NULL;
    RETURN NULL;
END $$;

-- Only what a search reads: the usage counts and stability the jobs write change nothing here.
CREATE FUNCTION memoryhub_log_changed_memories() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {LOG} (namespace_id)
    SELECT n.namespace_id FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE ({", ".join("n." + c for c in SEARCHED.split(", "))})
           IS DISTINCT FROM ({", ".join("o." + c for c in SEARCHED.split(", "))})
    UNION
    SELECT o.namespace_id FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE n.namespace_id IS DISTINCT FROM o.namespace_id;
    RETURN NULL;
END $$;

CREATE TRIGGER memory_changes_insert AFTER INSERT ON memories_memory
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memoryhub_log_new_rows();
CREATE TRIGGER memory_changes_update AFTER UPDATE ON memories_memory
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memoryhub_log_changed_memories();
CREATE TRIGGER memory_changes_delete AFTER DELETE ON memories_memory
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memoryhub_log_old_rows();
CREATE TRIGGER passage_changes_insert AFTER INSERT ON memories_passage
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memoryhub_log_new_rows();
CREATE TRIGGER passage_changes_update AFTER UPDATE ON memories_passage
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memoryhub_log_changed_passages();
CREATE TRIGGER passage_changes_delete AFTER DELETE ON memories_passage
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memoryhub_log_old_rows();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS memory_changes_insert ON memories_memory;
DROP TRIGGER IF EXISTS memory_changes_update ON memories_memory;
DROP TRIGGER IF EXISTS memory_changes_delete ON memories_memory;
DROP TRIGGER IF EXISTS passage_changes_insert ON memories_passage;
DROP TRIGGER IF EXISTS passage_changes_update ON memories_passage;
DROP TRIGGER IF EXISTS passage_changes_delete ON memories_passage;
DROP FUNCTION IF EXISTS memoryhub_log_new_rows();
DROP FUNCTION IF EXISTS memoryhub_log_old_rows();
DROP FUNCTION IF EXISTS memoryhub_log_changed_passages();
DROP FUNCTION IF EXISTS memoryhub_log_changed_memories();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0028_passage_one_memory_index"),
    ]

    operations = [
        migrations.CreateModel(
            name="NamespaceChange",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                (
                    "at",
                    models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
                ),
                (
                    "namespace",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="memories.namespace",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["namespace", "id"], name="namespace_change")],
            },
        ),
        migrations.RunSQL(FORWARD, BACKWARD),
    ]
