"""`manage.py evaluate` on a tiny dataset: it reports the metrics, passes its configuration to
search() (the --disable stages included) and leaves the settings as it found them; it selects
conversations and reports abstention."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

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


CONVERSATIONS = {
    "garden": [
        "Ana: I planted tomatoes and basil in the raised bed on Saturday.",
        "Ben: Did the basil survive the frost?",
        "Ana: The basil died, but the tomatoes are fine under the fleece.",
    ],
    "bikes": [
        "Cleo: My road bike needs a new chain before the race.",
        "Dev: Which race are you riding?",
        "Cleo: The Alpine gran fondo in July, 120 kilometres.",
    ],
    "kitchen": [
        "Eli: The oven thermostat is broken again.",
        "Fay: Call the repair shop on Main Street, they fixed ours.",
        "Eli: They can come on Tuesday morning.",
    ],
}
CONVERSATION_QUERIES = [
    ("garden", "What did Ana plant in the raised bed?", ["garden:0"]),
    ("bikes", "Which race is Cleo riding in July?", ["bikes:2"]),
    ("kitchen", "Who fixed the oven thermostat?", ["kitchen:1"]),
]


@pytest.fixture
def conversations(tmp_path, embedding_model):
    with open(tmp_path / "memories.jsonl", "w") as out:
        for name, turns in CONVERSATIONS.items():
            for n, text in enumerate(turns):
                record = {"id": f"{name}:{n}", "namespace": name, "content": text,
                          "created_at": f"2024-03-0{n + 1}T10:00:00"}  # fmt: skip
                out.write(json.dumps(record) + "\n")
    with open(tmp_path / "queries.jsonl", "w") as out:
        for name, query, relevant in CONVERSATION_QUERIES:
            out.write(json.dumps({"namespace": name, "query": query, "relevant": relevant,
                                  "category": "single-hop"}) + "\n")  # fmt: skip
    return tmp_path


@pytest.mark.django_db(transaction=True)
def test_selected_conversations_and_the_abstention_report(conversations, tmp_path, capsys):
    report = tmp_path / "report.json"
    call_command("evaluate", str(conversations), "--conversations", "0-1", "--json", str(report),
                 verbosity=0)  # fmt: skip
    result = json.loads(report.read_text())
    assert result["queries"] == 2 and result["conversations"] == ["garden", "bikes"]
    abstention = result["abstention"]
    # each query asked in the other selected conversation: the flag fires there
    assert abstention["unanswerable_searches"] == 2
    assert abstention["flag_rate_unanswerable"] == 1.0
    assert abstention["answerable_searches"] == 2 and abstention["flag_rate_answerable"] == 0.0
    assert abstention["auroc"] == 1.0
    assert "abstention: flag rate" in capsys.readouterr().out
    assert not Namespace.objects.filter(name__startswith="eval-").exists()


def test_unknown_conversation_names_the_option(conversations):
    with pytest.raises(CommandError, match="--conversations"):
        call_command("evaluate", str(conversations), "--conversations", "7", verbosity=0)
