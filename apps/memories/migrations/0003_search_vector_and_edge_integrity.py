"""Database-maintained full-text vector and edge integrity.

- search_vector = title (A) + trigger phrases and tag names (B) + content (C) + file path (D),
  recomputed by triggers whenever those columns or the memory's tags change.
- Composite foreign keys tie both ends of an edge to the edge's namespace.
"""

from django.db import migrations

FORWARD = r"""
CREATE FUNCTION memoryhub_memory_tsv(
    mem_id uuid, title text, phrases varchar[], content text, file_path text
) RETURNS tsvector LANGUAGE sql STABLE AS $$
    SELECT
        setweight(to_tsvector('english', coalesce(title, '')), 'A')
        || setweight(to_tsvector('english',
               coalesce(array_to_string(phrases, ' '), '') || ' ' ||
               coalesce((SELECT string_agg(replace(t.name, '-', ' '), ' ')
                           FROM memories_memory_tags mt JOIN memories_tag t ON t.id = mt.tag_id
                          WHERE mt.memory_id = mem_id), '')), 'B')
        || setweight(to_tsvector('english', coalesce(content, '')), 'C')
        || setweight(to_tsvector('english',
               coalesce(translate(file_path, '/\._-', '    '), '')), 'D')
$$;

CREATE FUNCTION memoryhub_memory_tsv_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_vector := memoryhub_memory_tsv(
        NEW.id, NEW.title, NEW.trigger_phrases, NEW.content, NEW.file_path);
    RETURN NEW;
END $$;

CREATE TRIGGER memory_tsv_insert BEFORE INSERT ON memories_memory
    FOR EACH ROW EXECUTE FUNCTION memoryhub_memory_tsv_trigger();
CREATE TRIGGER memory_tsv_update
    BEFORE UPDATE OF title, trigger_phrases, content, file_path, search_vector ON memories_memory
    FOR EACH ROW EXECUTE FUNCTION memoryhub_memory_tsv_trigger();

-- Tag links change: touch search_vector, which makes the row trigger recompute it.
CREATE FUNCTION memoryhub_tags_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memories_memory SET search_vector = NULL
     WHERE id IN (SELECT DISTINCT memory_id FROM changed_rows);
    RETURN NULL;
END $$;

CREATE TRIGGER memory_tags_insert AFTER INSERT ON memories_memory_tags
    REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memoryhub_tags_added();
CREATE TRIGGER memory_tags_delete AFTER DELETE ON memories_memory_tags
    REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memoryhub_tags_added();

CREATE FUNCTION memoryhub_tag_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memories_memory SET search_vector = NULL
     WHERE id IN (SELECT memory_id FROM memories_memory_tags WHERE tag_id = NEW.id);
    RETURN NULL;
END $$;

CREATE TRIGGER tag_renamed AFTER UPDATE OF name ON memories_tag
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
    EXECUTE FUNCTION memoryhub_tag_renamed();

ALTER TABLE memories_causaledge
    ADD CONSTRAINT edge_source_same_namespace FOREIGN KEY (source_id, namespace_id)
        REFERENCES memories_memory (id, namespace_id) ON DELETE CASCADE,
    ADD CONSTRAINT edge_target_same_namespace FOREIGN KEY (target_id, namespace_id)
        REFERENCES memories_memory (id, namespace_id) ON DELETE CASCADE;
"""

BACKWARD = r"""
ALTER TABLE memories_causaledge
    DROP CONSTRAINT edge_source_same_namespace,
    DROP CONSTRAINT edge_target_same_namespace;
DROP TRIGGER tag_renamed ON memories_tag;
DROP TRIGGER memory_tags_insert ON memories_memory_tags;
DROP TRIGGER memory_tags_delete ON memories_memory_tags;
DROP TRIGGER memory_tsv_insert ON memories_memory;
DROP TRIGGER memory_tsv_update ON memories_memory;
DROP FUNCTION memoryhub_tag_renamed();
DROP FUNCTION memoryhub_tags_added();
DROP FUNCTION memoryhub_memory_tsv_trigger();
DROP FUNCTION memoryhub_memory_tsv(uuid, text, varchar[], text, text);
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0002_initial")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
