"""The readable diff the web UI renders: per field before/after, word-level for text."""

from __future__ import annotations

import pytest

from apps.history.diff import revision_diff, revisions_diff, word_diff
from apps.history.selectors import revisions_for_memory
from apps.memories.services import memory_create, memory_update


def test_word_diff_marks_changed_words_and_keeps_the_text():
    segments = word_diff("Deploy on Friday evening", "Deploy on Monday morning, never Friday")
    assert ("delete", " evening") in segments and ("insert", "Monday morning, never ") in segments
    assert "".join(t for op, t in segments if op != "delete") == (
        "Deploy on Monday morning, never Friday"
    )
    assert "".join(t for op, t in segments if op != "insert") == "Deploy on Friday evening"


@pytest.mark.django_db
@pytest.mark.usefixtures("embedding_model")
def test_diff_between_revisions_lists_changed_fields(namespace):
    memory = memory_create(namespace=namespace, content="Cache TTL is 60 seconds").memory
    memory_update(memory=memory, content="Cache TTL is 300 seconds", tags=["perf", "infra"])
    memory_update(memory=memory, importance=0.9)
    newest, middle, created = revisions_for_memory(memory)

    assert [d.name for d in revision_diff(newest)] == ["importance"]
    first = {d.name: d for d in revision_diff(created)}
    assert first["content"].after == "Cache TTL is 60 seconds" and first["content"].before is None

    across = {d.name: d for d in revisions_diff(created, newest)}
    assert set(across) == {"content", "tags", "importance"}
    assert across["tags"].before == ["perf"] and across["tags"].after == ["infra", "perf"]
    assert ("insert", "300") in across["content"].words
