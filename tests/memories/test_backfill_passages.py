"""Memories written before passages existed get theirs from `manage.py backfill_passages`."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from apps.memories.models import Passage
from apps.memories.passages import passage_texts
from tests.factories import bare_memories

pytestmark = pytest.mark.django_db

TEXTS = [
    "Caroline: Thanks, it was a long week. I finally finished the sunset painting for the show.",
    "Deploys go out on Tuesdays.",  # one sentence: no passages
    "Melanie: We went camping at the lake. The kids loved the marshmallows! Back on Monday.",
]


def test_backfill_stores_the_missing_passages_once(namespace, embedding_model):
    old = bare_memories(namespace, len(TEXTS), lambda i: {"content": TEXTS[i]})
    assert not Passage.objects.exists()  # written the old way
    expected = sum(len(passage_texts(m.title, m.content)) for m in old)
    assert expected == 5

    out = StringIO()
    call_command("backfill_passages", stdout=out, stderr=StringIO())
    assert Passage.objects.count() == expected and "5 passages stored" in out.getvalue()
    by_memory = {m.pk: Passage.objects.filter(memory=m).count() for m in old}
    assert list(by_memory.values()) == [2, 0, 3]

    again = StringIO()
    call_command("backfill_passages", stdout=again, stderr=StringIO())
    assert Passage.objects.count() == expected and "0 passages stored" in again.getvalue()


def test_unknown_namespace_is_refused(db):
    with pytest.raises(Exception, match="No namespace named 'nope'"):
        call_command("backfill_passages", "--namespace", "nope", stdout=StringIO())
