"""The full-text index keeps at most 512 kB of not yet merged entries (PostgreSQL's default:
4 MB, gin_pending_list_limit).

New rows' search-vector entries wait in the index's pending list until it fills, VACUUM runs,
or gin_clean_pending_list() is called; every keyword lookup reads the whole list. After a bulk
load into 413k memories a full 4 MB list (147 pages, 4,085 rows) made each term's index lookup
1-11 ms instead of 0.05-1 ms, and a search makes several. A smaller list is merged more often,
in batches still large enough to share the work per term.
"""

from django.db import migrations

INDEX = "memory_search_vector_gin"


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0016_memory_version_db_default"),
    ]

    operations = [
        migrations.RunSQL(
            sql=f"ALTER INDEX {INDEX} SET (gin_pending_list_limit = 512)",
            reverse_sql=f"ALTER INDEX {INDEX} RESET (gin_pending_list_limit)",
        ),
    ]
