"""Export then import keeps the links a write drew (caused_by, depends_on) and the re-check
marks, their bases named by the ids the export gives them (issue 44, point 4)."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from apps.core.exceptions import ValidationFailed
from apps.memories.models import CausalEdge, Memory, Namespace, RecheckMark
from apps.memories.services import memory_create, memory_update
from apps.transfer.transfer import import_records

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


def test_export_then_import_keeps_links_and_marks(namespace, tmp_path):
    fact = memory_create(namespace=namespace, content="Staging runs Postgres 14.").memory
    outage = memory_create(namespace=namespace, content="The staging disk filled up.").memory
    step = memory_create(
        namespace=namespace,
        content="Runbook: use the pg14 extension list on staging.",
        depends_on=[str(fact.pk)],
        caused_by=[str(outage.pk)],
    ).memory
    memory_update(memory=fact, content="Staging runs Postgres 16.")
    (mark,) = RecheckMark.objects.filter(memory=step)

    out = tmp_path / "export.jsonl"
    call_command("export_memories", output=str(out))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    exported = next(r for r in records if r["id"] == str(step.pk))
    assert [(m["basis"], m["reason"]) for m in exported["needs_recheck"]] == [
        (str(fact.pk), "edited")
    ]
    Namespace.objects.all().delete()
    call_command("import_memories", str(out), no_progress=True)

    restored = {m.external_id: m for m in Memory.objects.all()}
    new_step, new_fact = restored[str(step.pk)], restored[str(fact.pk)]
    assert CausalEdge.objects.filter(
        source=new_step, target=new_fact, relation="depends_on"
    ).exists()
    assert CausalEdge.objects.filter(
        source=restored[str(outage.pk)], target=new_step, relation="caused"
    ).exists()
    (back,) = RecheckMark.objects.filter(memory=new_step)
    assert (back.basis_id, back.reason, back.token) == (new_fact.pk, "edited", mark.token)
    assert back.marked_at == mark.marked_at
    # The restored mark still works: putting the old text back clears it.
    memory_update(memory=new_fact, content="Staging runs Postgres 14.")
    assert not RecheckMark.objects.filter(memory=new_step).exists()


def test_an_import_names_links_and_refuses_bad_marks(namespace):
    import_records(
        [{"id": "fact-1", "namespace": namespace.name, "content": "Staging runs Postgres 14."}],
        progress=False,
    )
    import_records(
        [
            {
                "id": "step-1",
                "namespace": namespace.name,
                "content": "Use the pg14 extension list.",
                "depends_on": ["fact-1"],
            }
        ],
        progress=False,
    )
    step = Memory.objects.get(external_id="step-1")
    assert CausalEdge.objects.filter(source=step, target__external_id="fact-1").exists()
    with pytest.raises(ValidationFailed) as failed:
        import_records(
            [
                {
                    "id": "x",
                    "namespace": namespace.name,
                    "content": "y",
                    "needs_recheck": [{"basis": 3}],
                }
            ],
            progress=False,
        )
    assert "line 1.needs_recheck[0]" in failed.value.errors
