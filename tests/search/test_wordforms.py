"""Word forms the stemmer does not join: a question in one form finds the memory that said it
in another, through the keyword strategy; the confidence estimate reads the query's own words."""

from __future__ import annotations

from apps.search.pipeline import retrieve, wordforms
from apps.search.pipeline.scope import Scope


def test_other_forms_of_irregular_verbs_and_nouns():
    assert set(wordforms.other_forms("What did Jon buy?").split()) == {"bought"}
    assert "injury" in wordforms.other_forms("when was she injured")
    assert wordforms.other_forms("a plain question about caching") == ""


def _found(namespace, query: str, forms: bool) -> tuple[list[str], retrieve.LexicalPlan]:
    other = wordforms.other_forms(query) if forms else ""
    plan = retrieve.lexical_plan(query, namespace.id, forms=other)
    hits = retrieve.lexical_search(Scope(namespace_id=namespace.id), plan, 10)
    return [h.id for h in hits], plan


def test_a_question_in_one_form_finds_the_memory_in_another(namespace, remember):
    bought, injury, _ = remember(
        [
            "Jon bought a second-hand guitar at the flea market.",
            "Nate's knee injury kept him off the court for a month.",
            "Jon wants to open a dance studio.",
        ]
    )
    found, _ = _found(namespace, "What guitar did Jon buy?", forms=True)
    assert str(bought.id) == found[0]
    found, _ = _found(namespace, "Who was injured?", forms=True)
    assert found == [str(injury.id)]
    found, _ = _found(namespace, "Who was injured?", forms=False)
    assert found == []  # the stemmer keeps "injur" and "injuri" apart


def test_added_forms_do_not_count_as_query_words(namespace, remember):
    remember(["Jon bought a second-hand guitar at the flea market."])
    _, with_forms = _found(namespace, "Did Jon buy a violin?", forms=True)
    _, without = _found(namespace, "Did Jon buy a violin?", forms=False)
    assert with_forms.query_idf == without.query_idf
    assert with_forms.missing_idf == without.missing_idf
    assert len(with_forms.lexemes) > len(without.lexemes)
