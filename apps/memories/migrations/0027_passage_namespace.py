"""Each passage carries its memory's namespace.

The exact semantic scan of a small namespace ranks every memory by the higher of its own cosine
and its best passage's. Read as a subquery per memory, that is one index probe per memory
(about two thirds of the scan's time, measured on locomo-dev); with the namespace on the
passage row, the scan reads the namespace's passages as one range of an index and takes each
memory's best in one pass (docs/benchmarks.md, "The cost of a search, by stage").

The database keeps the column right whatever writes a passage (the write path, the passages
job, a bulk load): a trigger copies the namespace from the memory on insert, and another moves a
memory's passages with it should the memory ever change namespace.
"""

from django.db import migrations, models

FORWARD = """
UPDATE memories_passage p SET namespace_id = m.namespace_id
FROM memories_memory m WHERE m.id = p.memory_id;

-- A passage written before its memory (foreign keys are checked at commit) keeps what it was
-- given rather than losing it.
CREATE FUNCTION memoryhub_passage_namespace() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.namespace_id := coalesce(
        (SELECT m.namespace_id FROM memories_memory m WHERE m.id = NEW.memory_id),
        NEW.namespace_id);
    RETURN NEW;
END $$;

CREATE TRIGGER passage_namespace BEFORE INSERT OR UPDATE OF memory_id, namespace_id
ON memories_passage FOR EACH ROW EXECUTE FUNCTION memoryhub_passage_namespace();

CREATE FUNCTION memoryhub_passages_follow_memory() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memories_passage SET namespace_id = NEW.namespace_id WHERE memory_id = NEW.id;
    RETURN NULL;
END $$;

CREATE TRIGGER passages_follow_memory AFTER UPDATE OF namespace_id ON memories_memory
FOR EACH ROW WHEN (OLD.namespace_id IS DISTINCT FROM NEW.namespace_id)
EXECUTE FUNCTION memoryhub_passages_follow_memory();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS passages_follow_memory ON memories_memory;
DROP FUNCTION IF EXISTS memoryhub_passages_follow_memory();
DROP TRIGGER IF EXISTS passage_namespace ON memories_passage;
DROP FUNCTION IF EXISTS memoryhub_passage_namespace();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0026_batchjob_moves_to_transfer"),
    ]

    operations = [
        migrations.AddField(
            model_name="passage",
            name="namespace",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                editable=False,
                null=True,
                on_delete=models.DO_NOTHING,
                related_name="+",
                to="memories.namespace",
            ),
        ),
        migrations.RunSQL(FORWARD, BACKWARD),
        migrations.AddIndex(
            model_name="passage",
            index=models.Index(fields=["namespace", "memory"], name="passage_namespace"),
        ),
    ]
