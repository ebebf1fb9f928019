"""`manage.py evaluate` on a tiny dataset: conversation selection and the abstention report."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from apps.memories.models import Namespace

pytestmark = pytest.mark.django_db(transaction=True)

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
QUERIES = [
    ("garden", "What did Ana plant in the raised bed?", ["garden:0"]),
    ("bikes", "Which race is Cleo riding in July?", ["bikes:2"]),
    ("kitchen", "Who fixed the oven thermostat?", ["kitchen:1"]),
]


@pytest.fixture
def dataset(tmp_path, embedding_model):
    with open(tmp_path / "memories.jsonl", "w") as out:
        for name, turns in CONVERSATIONS.items():
            for n, text in enumerate(turns):
                record = {"id": f"{name}:{n}", "namespace": name, "content": text,
                          "created_at": f"2024-03-0{n + 1}T10:00:00"}  # fmt: skip
                out.write(json.dumps(record) + "\n")
    with open(tmp_path / "queries.jsonl", "w") as out:
        for name, query, relevant in QUERIES:
            out.write(json.dumps({"namespace": name, "query": query, "relevant": relevant,
                                  "category": "single-hop"}) + "\n")  # fmt: skip
    return tmp_path


def test_selected_conversations_and_the_abstention_report(dataset, tmp_path, capsys):
    report = tmp_path / "report.json"
    call_command("evaluate", str(dataset), "--conversations", "0-1", "--json", str(report),
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


def test_unknown_conversation_names_the_option(dataset):
    with pytest.raises(CommandError, match="--conversations"):
        call_command("evaluate", str(dataset), "--conversations", "7", verbosity=0)
