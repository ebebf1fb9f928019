"""`manage.py bench` end to end on a small dataset: the real write path, model and database."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from apps.memories.models import Memory, Namespace
from apps.memories.services import memory_batch_create

pytestmark = pytest.mark.django_db(transaction=True)

TEXTS = [
    "The backup job copies the database to the NAS every night at two.",
    "Alice prefers tea over coffee in the morning.",
    "The staging cluster runs three web workers behind nginx.",
    "Our tax forms are due at the end of April.",
    "The cat sleeps on the sofa most afternoons.",
    "Redis holds the Celery broker queue on database two.",
    "Bob is learning to play the cello this year.",
    "The HNSW index is rebuilt after a bulk import.",
]


@pytest.fixture
def dataset(tmp_path):
    with (tmp_path / "memories.jsonl").open("w") as out:
        for i, text in enumerate(TEXTS):
            tags = ["rare"] if i == 0 else ["common"]
            created = f"2024-01-01T00:{i:02d}:00+00:00"
            out.write(json.dumps({"content": text, "tags": tags, "created_at": created}) + "\n")
    queries = ["when does the backup run", "what does Alice drink", "who plays the cello"]
    with (tmp_path / "queries.jsonl").open("w") as out:
        for q in queries:
            out.write(json.dumps({"query": q, "relevant": []}) + "\n")
    return tmp_path


def test_bench_reports_every_figure_and_cleans_up(dataset, embedding_model, tmp_path, settings):
    settings.VECTOR_INDEX_BEHIND_MIN = 2  # the sample's batches wait outside the HNSW index
    out = StringIO()
    report = tmp_path / "bench.json"
    call_command(
        "bench", sizes=[6, 12], queries=3, recall_queries=2, source=dataset,
        json_path=report, stdout=out, stderr=StringIO(),
    )  # fmt: skip
    rows = json.loads(report.read_text())
    assert [r["size"] for r in rows] == [6, 12]
    for row in rows:
        assert row["ingest_per_s"] > 0 and row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"]
        assert row["ann_recall@10"] > 0.5 and row["db_mb"] > 0 and row["hnsw_mb"] >= 0
        assert row["tag_filter"].startswith("rare")
        # Searches were timed after the vector_index job added the sample to the index.
        assert row["vector_index_rows"] == 6
        assert 0 < row["ingest_with_index_per_s"] <= row["ingest_per_s"]
    assert "| 12 |" in out.getvalue()
    assert not Namespace.objects.filter(name__startswith="bench-").exists()


def test_bench_reuses_cached_vectors_copies_and_spreads_namespaces(
    dataset, embedding_model, tmp_path
):
    cache = tmp_path / "vectors"
    call_command("bench", source=dataset, vectors=cache, prepare_vectors=100, stderr=StringIO())
    assert len(np.load(cache / "vectors-00000000.npy")) == len(TEXTS)
    report = tmp_path / "bench.json"
    call_command(
        "bench", sizes=[12], queries=2, recall_queries=2, source=dataset, vectors=cache,
        model_sample=2, spread=3, bulk=True, copy=True, lock=tmp_path / "lock",
        json_path=report, stdout=StringIO(), stderr=StringIO(),
    )  # fmt: skip
    rows = json.loads(report.read_text())
    first = rows[0]
    # 10 rows from the cache (8 texts, then 2 suffixed copies with variant vectors), 2 modelled
    assert first["ingest_measured_over"] == 2 and first["variant_vector_rows"] == 2
    assert first["index_build_s"] >= 0 and first["ingest_conditions"]["locked"] is True
    spread = rows[1]["spread"]
    assert spread["namespaces"] == 3 and spread["1%"]["size"] >= 1
    assert spread["largest"]["size"] >= spread["1%"]["size"]
    # --bulk: the spread's rows go in without the index, which is built once after them
    assert spread["index_build_s"] >= 0 and spread["hnsw_mb"] >= 0
    assert spread["table_rows"] >= 12 + spread["total"]


def test_a_kept_namespace_is_measured_again_without_a_fill_with_its_stage_profile(
    dataset, embedding_model, tmp_path
):
    def bench(report):
        out = StringIO()
        call_command(
            "bench", sizes=[8], queries=3, recall_queries=2, source=dataset, model_sample=8,
            namespace="bench-kept-scale", profile=True, json_path=report,
            stdout=out, stderr=StringIO(),
        )  # fmt: skip
        return json.loads(report.read_text())[0], out.getvalue()

    first, _ = bench(tmp_path / "first.json")  # a namespace named is kept without --keep
    again, printed = bench(tmp_path / "again.json")
    assert first["ingest_measured_over"] == 8
    assert "ingest_measured_over" not in again  # already at the size: measured, not filled
    assert Memory.objects.filter(namespace__name="bench-kept-scale").count() == 8
    profile = again["profile"]
    assert profile["searches"] == 3 and profile["sql_per_search"] > 0
    stages = profile["stages"]
    assert stages["payload"]["sql"] >= 1 and stages["lexical"]["sql"] >= 1
    # CPU is told per thread: the query encoder works on a thread of its own.
    assert profile["threads"]["searching thread"] > 0 and "embedding-batcher" in profile["threads"]
    assert "| fetch |" in printed and "| thread | CPU ms per search |" in printed


def test_batch_create_stores_the_vectors_it_is_given(namespace, embedding_model):
    given = np.zeros((2, 384), dtype=np.float32)
    given[0, 0] = given[1, 1] = 1.0
    results = memory_batch_create(
        namespace=namespace, items=[{"content": "first"}, {"content": "second"}],
        vectors=given, check_near_duplicates=False,
    )  # fmt: skip
    stored = Memory.objects.get(pk=results[1].memory.pk)
    assert np.allclose(np.asarray(stored.embedding), given[1])
