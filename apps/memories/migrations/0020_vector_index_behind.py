"""The HNSW index holds only the rows marked vector_indexed; a large batch writes its rows
outside it and the vector_index job adds them (apps/vectors/vector_index.py). Every stored row
starts inside. Rebuilding the index took 28 s at 100k memories and 151 s at 413k on two cores."""

import django.contrib.postgres.indexes
import django.db.models.functions.comparison
import pgvector.django.halfvec
import pgvector.django.indexes
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0019_pending_turn"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="memory",
            name="memory_embedding_half_hnsw",
        ),
        migrations.AddField(
            model_name="memory",
            name="vector_indexed",
            field=models.BooleanField(db_default=True, default=True),
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
                condition=models.Q(("vector_indexed", True)),
                ef_construction=64,
                m=16,
                name="memory_embedding_half_hnsw",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("vector_indexed", False)),
                fields=["namespace"],
                name="memory_ns_unindexed",
            ),
        ),
    ]
