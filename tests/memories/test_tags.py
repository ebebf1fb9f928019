import pytest

from apps.memories.tags import infer_tags


@pytest.mark.parametrize(
    "content, category, expected",
    [
        ("Fixed the login bug", "note", ["bugfix"]),
        ("The prefix of every key is 'mh_'", "note", []),
        ("A suffix and an affix", "note", []),
        ("It crashes on start", "note", ["bugfix"]),
        ("TODO: replace this hack", "note", ["tech-debt"]),
        ("quick   fix for now", "note", ["bugfix", "tech-debt"]),
        ("Queries were slow until we added a cache", "note", ["perf"]),
        ("optimizing the importer", "learning", ["perf"]),
        ("breakfast is fast", "note", ["perf"]),
        ("breakfast at nine", "note", []),
        ("Don't call this from a request", "pattern", ["warning"]),
        ("Anything at all", "warning", ["warning"]),
        ("We avoid raw SQL here", "decision", ["warning"]),
    ],
)
def test_inferred_tags_match_whole_words(content, category, expected):
    assert infer_tags(content, category) == expected


def test_given_tags_are_not_duplicated():
    assert infer_tags("fix the slow cache", "note", given=["perf", "Bugfix"]) == []


@pytest.mark.parametrize(
    "content",
    ["Caroline: my car broke down on the way, such a slow day", "Mel: don't worry, fix it later"],
)
def test_a_conversation_turn_gets_no_inferred_tag(content):
    assert infer_tags(content, "conversation") == []
    assert infer_tags(content, "note") != []  # the same words in a note still count
