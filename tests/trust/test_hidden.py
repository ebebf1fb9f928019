"""Hidden characters: found, shown to people as code points, removed from what an assistant
reads; the joiners that build an emoji or a Persian word are writing and stay."""

from __future__ import annotations

from apps.trust.hidden import find_hidden, hidden_text, show_hidden, strip_hidden

TAGGED = "ok" + "".join(chr(0xE0000 + ord(c)) for c in "hi") + "!"


def test_tag_characters_are_found_stripped_shown_and_spelled():
    assert find_hidden(TAGGED) == [(2, 4)]
    assert strip_hidden(TAGGED) == "ok!"
    assert show_hidden(TAGGED) == "ok[U+E0068][U+E0069]!"
    assert hidden_text(TAGGED[2:4]) == "hi"


def test_zero_width_between_ascii_letters_is_hidden():
    text = "a\u200bb\u202ec"
    assert find_hidden(text) == [(1, 2), (3, 4)]
    assert strip_hidden(text) == "abc"


def test_joiners_inside_emoji_and_words_are_writing_but_never_reach_an_assistant():
    for text in (
        "\U0001f9d1\u200d\U0001f4bb pairing",
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0645",
    ):
        assert find_hidden(text) == []
        assert show_hidden(text) == text
        assert not any(c in strip_hidden(text) for c in "\u200c\u200d")


def test_a_run_of_joiners_is_hidden_even_next_to_an_emoji():
    text = "\U0001f600\u200d\u200d\u200d"
    assert find_hidden(text) == [(1, 4)]
