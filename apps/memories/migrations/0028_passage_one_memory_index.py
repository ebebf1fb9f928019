"""Passages had two identical indexes on memory_id: the foreign key's own and passage_memory.
Every passage insert paid for both. The foreign key's goes; passage_memory stays.

Only the index is dropped: Django's AlterField would also drop and re-add the foreign-key
constraint, which re-checks every passage row under a lock."""

import django.db.models.deletion
from django.db import migrations, models

FOREIGN_KEY_INDEX = "memories_passage_memory_id_0fd5fcb4"


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0027_passage_namespace"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="passage",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="passages",
                        to="memories.memory",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{FOREIGN_KEY_INDEX}"',
                    reverse_sql=(
                        f'CREATE INDEX IF NOT EXISTS "{FOREIGN_KEY_INDEX}" '
                        'ON "memories_passage" ("memory_id")'
                    ),
                ),
            ],
        ),
    ]
