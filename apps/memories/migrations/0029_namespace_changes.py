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
-- Inserts and deletes log the rows' namespaces; an update of passages both ends' (a passage
-- moves only with its memory). The transition tables a trigger does not declare are not read.
CREATE FUNCTION memoryhub_log_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO {LOG} (namespace_id)
        SELECT DISTINCT namespace_id FROM new_rows WHERE namespace_id IS NOT NULL;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO {LOG} (namespace_id)
        SELECT DISTINCT namespace_id FROM old_rows WHERE namespace_id IS NOT NULL;
    ELSE
        INSERT INTO {LOG} (namespace_id)
        SELECT namespace_id FROM new_rows WHERE namespace_id IS NOT NULL
        UNION SELECT namespace_id FROM old_rows WHERE namespace_id IS NOT NULL;
    END IF;
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

"""

# (trigger, table, event, transition tables, function): one statement-level trigger each.
TRIGGERS = [
    (f"{prefix}_changes_{event.lower()}", table, event, tables, function)
    for prefix, table, update_function in (
        ("memory", "memories_memory", "memoryhub_log_changed_memories"),
        ("passage", "memories_passage", "memoryhub_log_rows"),
    )
    for event, tables, function in (
        ("INSERT", "NEW TABLE AS new_rows", "memoryhub_log_rows"),
        ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows", update_function),
        ("DELETE", "OLD TABLE AS old_rows", "memoryhub_log_rows"),
    )
]
FORWARD += "".join(
    f"CREATE TRIGGER {name} AFTER {event} ON {table} REFERENCING {tables} "
    f"FOR EACH STATEMENT EXECUTE FUNCTION {function}();\n"
    for name, table, event, tables, function in TRIGGERS
)
BACKWARD = "".join(f"DROP TRIGGER IF EXISTS {name} ON {table};\n" for name, table, *_ in TRIGGERS)
BACKWARD += """
DROP FUNCTION IF EXISTS memoryhub_log_rows();
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
