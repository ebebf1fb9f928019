"""Vector storage for large namespaces.

- The HNSW index is built on the embedding cast to halfvec: half the size of the float index
  (so more of it stays in memory at 400k memories), the same neighbours to within rounding.
  Search orders by that expression; similarities are still computed on the stored floats.
- Embeddings are stored in the row (STORAGE MAIN) instead of out of line: an exact scan (small
  namespaces, selective filters) then reads one heap row per memory instead of a TOAST lookup.
  Long content is still moved out of line first. Applies to rows written from now on.
- (namespace, category) index: a category filter that few memories pass is read from it.
"""

import django.contrib.postgres.indexes
import django.db.models.functions.comparison
import pgvector.django.halfvec
import pgvector.django.indexes
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0006_unique_content"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memories_memory ALTER COLUMN embedding SET STORAGE MAIN",
            "ALTER TABLE memories_memory ALTER COLUMN embedding SET STORAGE EXTERNAL",
        ),
        migrations.RemoveIndex(
            model_name="memory",
            name="memory_embedding_hnsw",
        ),
        migrations.AddIndex(
            model_name="memory",
            index=pgvector.django.indexes.HnswIndex(
                django.contrib.postgres.indexes.OpClass(
                    django.db.models.functions.comparison.Cast(
                        "embedding", pgvector.django.halfvec.HalfVectorField(dimensions=384)
                    ),
                    name="halfvec_cosine_ops",
                ),
                ef_construction=64,
                m=16,
                name="memory_embedding_half_hnsw",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(fields=["namespace", "category"], name="memory_ns_category"),
        ),
    ]
