"""The namespace change log (0029 to 0031) also records a change of the columns the row fetch
reads: the full-text vector (a title, trigger phrase or file path edited), the tier, the file
path, the importance, the stability and the PageRank score.

A search now reads a kept namespace's candidates' rows from the process (apps/search/pipeline/
reads/namespace_vectors.py): those columns, and each memory's stemmed terms for its keyword
score, are read with the vectors, so an UPDATE of any of them must move the log as the other
columns a search reads do. The decay and PageRank jobs change many rows in one statement: one
log row per namespace, and the namespace is read again once.
"""

from importlib import import_module

from django.db import migrations

# 0030's function, written for more columns (migrations are history: they stay as they are).
first = import_module("apps.memories.migrations.0030_namespace_changes_tags_content")
previous = import_module("apps.memories.migrations.0031_namespace_changes_external_id")
WITH_ROW_COLUMNS = (
    previous.WITH_EXTERNAL_ID + ", search_vector, tier, file_path, importance, stability, "
    "pagerank_score"
)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0031_namespace_changes_external_id"),
    ]

    operations = [
        migrations.RunSQL(
            first._changed_memories(WITH_ROW_COLUMNS),
            first._changed_memories(previous.WITH_EXTERNAL_ID),
        )
    ]
