"""BatchJob moves to the transfer app (transfer 0001): it leaves this app's state only. The
table keeps its name, memories_batchjob, and its rows; nothing in the database changes."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0025_memory_reviewed_by"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="BatchJob")],
            database_operations=[],
        ),
    ]
