"""The namespace change log (0029 to 0032) also records a change of a namespace's links between
memories (causal edges): one added, changed or removed, whether by a write, a merge or the
deletion of one of its memories (a cascade fires these triggers too).

A search now reads a kept namespace's edges from the process (apps/search/pipeline/reads/
namespace_vectors.py): the graph walk's hops, and which relations the namespace holds at all,
which tells the payload whether to look for successors, older versions and contradictions.
Statement-level triggers, one log row per statement and namespace, as in 0029 and 0030.
"""

from django.db import migrations

LOG = "memories_namespacechange"

FORWARD = f"""
CREATE FUNCTION memoryhub_log_edges() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO {LOG} (namespace_id) SELECT DISTINCT namespace_id FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO {LOG} (namespace_id) SELECT DISTINCT namespace_id FROM old_rows;
    ELSE
        INSERT INTO {LOG} (namespace_id)
        SELECT namespace_id FROM new_rows UNION SELECT namespace_id FROM old_rows;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER edge_changes_insert AFTER INSERT ON memories_causaledge
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memoryhub_log_edges();
CREATE TRIGGER edge_changes_update AFTER UPDATE ON memories_causaledge
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memoryhub_log_edges();
CREATE TRIGGER edge_changes_delete AFTER DELETE ON memories_causaledge
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memoryhub_log_edges();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS edge_changes_delete ON memories_causaledge;
DROP TRIGGER IF EXISTS edge_changes_update ON memories_causaledge;
DROP TRIGGER IF EXISTS edge_changes_insert ON memories_causaledge;
DROP FUNCTION IF EXISTS memoryhub_log_edges();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0032_namespace_changes_row_columns"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
