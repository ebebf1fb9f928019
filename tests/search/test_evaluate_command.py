"""`manage.py evaluate` on a tiny dataset: it reports the metrics, passes its configuration to
search() (the --disable stages included) and leaves the settings as it found them."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from apps.memories.models import Namespace
from apps.search.config import search_settings

pytestmark = pytest.mark.django_db

MEMORIES = [
    ("d:1", "Caroline: I went to the LGBTQ support group yesterday.", "2023-05-08T13:56:00"),
    ("d:2", "Melanie: I painted a sunrise over the lake last summer.", "2023-05-08T13:57:00"),
    ("d:3", "Caroline: My dog is called Max and loves the beach.", "2023-05-08T13:58:00"),
    ("d:4", "Melanie: The kids and work keep me busy these days.", "2023-05-08T13:59:00"),
]
QUERIES = [
    ("Who painted a sunrise?", ["d:2"]),
    ("What is the name of Caroline's dog?", ["d:3"]),
]


@pytest.fixture
def dataset(tmp_path, embedding_model):
    with open(tmp_path / "memories.jsonl", "w") as out:
        for key, content, when in MEMORIES:
            row = {"id": key, "namespace": "conv", "content": content, "created_at": when}
            out.write(json.dumps(row) + "\n")
    with open(tmp_path / "queries.jsonl", "w") as out:
        for query, relevant in QUERIES:
            row = {"namespace": "conv", "query": query, "relevant": relevant, "category": "x"}
            out.write(json.dumps(row) + "\n")
    return tmp_path


def test_evaluate_reports_and_leaves_settings_alone(dataset, settings):
    before = search_settings()
    report = dataset / "report.json"
    stdout = StringIO()
    call_command(
        "evaluate",
        str(dataset),
        "--no-abstention",
        "--disable",
        "mmr",
        "--json",
        str(report),
        stdout=stdout,
        stderr=StringIO(),
    )
    result = json.loads(report.read_text())
    assert result["overall"]["recall@10"] == 1.0 and result["disabled"] == ["mmr"]
    assert "recall@10" in stdout.getvalue()
    assert search_settings() == before and "mmr" not in before.disabled
    assert not Namespace.objects.filter(name__startswith="eval-").exists()
