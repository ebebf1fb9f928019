"""The namespace change log (0029, 0030) also records a change of a memory's external id.

A search now reads the temporal neighbours of a kept namespace's candidates from the process
(apps/search/pipeline/reads/namespace_vectors.py, the timeline): the turns of an imported
session keep the natural order of their external ids there, so an UPDATE of that column must
move the log as the other columns a search reads do.
"""

from importlib import import_module

from django.db import migrations

# 0030's function, written for one more column (migrations are history: it stays as it is).
previous = import_module("apps.memories.migrations.0030_namespace_changes_tags_content")
WITH_EXTERNAL_ID = previous.WITH_CONTENT + ", external_id"


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0030_namespace_changes_tags_content"),
    ]

    operations = [
        migrations.RunSQL(
            previous._changed_memories(WITH_EXTERNAL_ID),
            previous._changed_memories(previous.WITH_CONTENT),
        )
    ]
