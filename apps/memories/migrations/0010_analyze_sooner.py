"""Autovacuum analyzes the memory table after 2% of it changed (PostgreSQL's default: 10%).

A namespace written since the last ANALYZE is planned as if it held one row, and plans made
for one row cost a large namespace 10-20x (docs/benchmarks.md). ANALYZE reads a fixed sample,
so running it five times as often costs little even at a million rows.
"""

from django.db import migrations

TABLES = ("memories_memory", "memories_memory_tags")


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0009_covering_indexes"),
    ]

    operations = [
        migrations.RunSQL(
            sql=[
                f"ALTER TABLE {table} SET (autovacuum_analyze_scale_factor = 0.02)"
                for table in TABLES
            ],
            reverse_sql=[
                f"ALTER TABLE {table} RESET (autovacuum_analyze_scale_factor)" for table in TABLES
            ],
        ),
    ]
