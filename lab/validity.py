"""Measuring facts that change (tooling, never imported by runtime code).

Two labelled sets under data/:
- train_updates.txt / train_related.txt: "older || newer" lines from public facts, updates
  (the newer replaces the older) and related pairs (both true). The possible-update detector's
  weights were set on these; `detector_scores` gives its precision and recall on them.
- heldout_changes.jsonl / heldout_related.jsonl: 24 changed facts with a question each, and 24
  related true pairs, written before any tuning and never tuned on; `heldout_scores` checks
  the acceptance criteria on them (search with supersedes, as_of, possible_updates).
- train_contradictions.txt / heldout_contradictions.jsonl: pairs where one side negates the
  other ("Never commit API tokens" / "Commit the API tokens"): a contradiction to resolve, never
  an update to confirm with one click. heldout_related_more.jsonl: 40 more related true pairs
  (change words inside other words, lists that share a subject, negations that both hold),
  with heldout_related.jsonl the extended set of 64. All written before the detector's cues
  were changed for them (docs/benchmarks.md).

Each measurement writes into namespaces of its own and removes them afterwards; a write whose
answer is all we need is rolled back, so every pair meets the same stored memories.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from apps.memories import updates as detector
from apps.memories.models import Memory, Namespace
from apps.memories.services import memory_batch_create, memory_create
from apps.search.services import search
from apps.vectors.embeddings import embed_texts

DATA = Path(__file__).parent / "data"
PREFIX = "validity-bench-"
OLD_TIME, NEW_TIME, BETWEEN = "2025-03-01", "2025-06-01", "2025-04-15"


def read_pairs(name: str) -> list[tuple[str, str]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [tuple(part.strip() for part in line.split("||")) for line in lines if "||" in line]


def read_jsonl(name: str) -> list[dict]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


class _Rollback(Exception):
    pass


def answer_then_forget(write: Callable[[], object]):
    """The write's answer, with nothing of it kept (so each pair meets the same store)."""
    answer = None
    try:
        with transaction.atomic():
            answer = write()
            raise _Rollback
    except _Rollback:
        pass
    return answer


@contextmanager
def scratch_namespace(name: str) -> Iterator[Namespace]:
    Namespace.objects.filter(name=PREFIX + name).delete()
    namespace = Namespace.objects.create(name=PREFIX + name)
    try:
        yield namespace
    finally:
        Memory.objects.filter(namespace=namespace).delete()
        namespace.delete()


def _store(namespace: Namespace, texts: list[str], created_at: str) -> dict[str, str]:
    """text -> id of the stored memory (an identical text stored once)."""
    items = [{"content": t, "created_at": created_at} for t in dict.fromkeys(texts)]
    results = memory_batch_create(namespace=namespace, items=items)
    return {item["content"]: str(r.memory.pk) for item, r in zip(items, results, strict=True)}


@dataclass(frozen=True)
class Named:
    """What writing a text (without supersedes) put in the conflicts queue."""

    updates: tuple[str, ...]  # ids named as possible updates
    contradictions: tuple[str, ...]  # ids named as possible contradictions

    @property
    def anything(self) -> bool:
        return bool(self.updates or self.contradictions)


def _named(namespace: Namespace, text: str) -> Named:
    result = answer_then_forget(
        lambda: memory_create(namespace=namespace, content=text, created_at=NEW_TIME)
    )
    return Named(
        tuple(u["id"] for u in result.possible_updates),
        tuple(c["id"] for c in result.possible_contradictions),
    )


def _names(namespace: Namespace, text: str, wanted: str | None) -> tuple[bool, bool]:
    """(names the wanted id as an update, puts anything in the queue)."""
    named = _named(namespace, text)
    return (wanted in named.updates, named.anything)


@dataclass
class DetectorScores:
    updates: int
    related: int
    found: int  # update pairs whose older fact was named
    wrong_on_updates: int  # update pairs where only other memories were named
    fired_on_related: int  # related pairs where anything was named

    @property
    def recall(self) -> float:
        return self.found / self.updates if self.updates else 0.0

    @property
    def precision(self) -> float:
        flagged = self.found + self.wrong_on_updates + self.fired_on_related
        return self.found / flagged if flagged else 0.0

    def as_dict(self) -> dict:
        return {
            **self.__dict__,
            "precision": round(self.precision, 3),
            "recall": round(self.recall, 3),
        }


def detector_scores(
    updates: list[tuple[str, str]], related: list[tuple[str, str]], tag: str
) -> DetectorScores:
    """Every older/first fact stored in one namespace; each newer/second written in turn
    (rolled back) without supersedes: does possible_updates name its pair, or anything?"""
    found = wrong = fired = 0
    with scratch_namespace(f"{tag}-updates") as namespace:
        ids = _store(namespace, [old for old, _ in updates], OLD_TIME)
        for old, new in updates:
            named, anything = _names(namespace, new, ids[old])
            found += named
            wrong += anything and not named
    with scratch_namespace(f"{tag}-related") as namespace:
        _store(namespace, [first for first, _ in related], OLD_TIME)
        for _, second in related:
            fired += _names(namespace, second, None)[1]
    return DetectorScores(len(updates), len(related), found, wrong, fired)


def heldout_scores() -> dict:
    """The acceptance criteria on the held-out set."""
    changes = read_jsonl("heldout_changes.jsonl")
    related = read_jsonl("heldout_related.jsonl")
    distractors = [t for r in related for t in (r["first"], r["second"])]
    out: dict = {"changes": len(changes), "related": len(related)}
    with scratch_namespace("heldout-search") as namespace:
        _store(namespace, distractors, "2025-02-01")
        old_ids = _store(namespace, [c["old"] for c in changes], OLD_TIME)
        new_ids = {}
        for change in changes:
            result = memory_create(
                namespace=namespace,
                content=change["new"],
                created_at=NEW_TIME,
                supersedes=[old_ids[change["old"]]],
            )
            new_ids[change["new"]] = str(result.memory.pk)
        current = past = 0
        misses = []
        for change in changes:
            old, new = old_ids[change["old"]], new_ids[change["new"]]
            now = [m["id"] for m in _search(namespace, change["query"])]
            then = [m["id"] for m in _search(namespace, change["query"], as_of=BETWEEN)]
            ok_now = new in now[:3] and old not in now
            ok_then = old in then[:3] and new not in then
            current += ok_now
            past += ok_then
            if not (ok_now and ok_then):
                misses.append({"query": change["query"], "now": ok_now, "as_of": ok_then})
        out.update(search_current=current, search_as_of=past, search_misses=misses)
    updates = [(c["old"], c["new"]) for c in changes]
    pairs = [(r["first"], r["second"]) for r in related]
    detector = detector_scores(updates, pairs, "heldout")
    out.update(
        possible_updates_named=detector.found,
        possible_updates_fired_on_related=detector.fired_on_related,
    )
    more = [(r["first"], r["second"]) for r in read_jsonl("heldout_related_more.jsonl")]
    out["extended_related"] = len(pairs) + len(more)
    out["fired_on_extended_related"] = detector.fired_on_related + related_fired(
        more, "heldout-more"
    )
    contradictions = [(c["older"], c["newer"]) for c in read_jsonl("heldout_contradictions.jsonl")]
    out.update(contradiction_scores(contradictions, "heldout").as_dict())
    return out


def related_fired(related: list[tuple[str, str]], tag: str) -> int:
    """Related true pairs whose second text put anything in the conflicts queue."""
    with scratch_namespace(f"{tag}-related") as namespace:
        _store(namespace, [first for first, _ in related], OLD_TIME)
        return sum(_named(namespace, second).anything for _, second in related)


@dataclass
class ContradictionScores:
    contradictions: int
    as_contradiction: int  # the negated fact named as a contradiction, not as an update
    as_update: int  # named as a possible update (offered for a one-click supersede)

    def as_dict(self) -> dict:
        return {f"negation_{k}": v for k, v in self.__dict__.items()}


def contradiction_scores(pairs: list[tuple[str, str]], tag: str) -> ContradictionScores:
    """Each older text stored; each newer one, which negates it, written in turn (rolled
    back): is the pair queued as a contradiction, and never as an update?"""
    as_contradiction = as_update = 0
    with scratch_namespace(f"{tag}-negations") as namespace:
        ids = _store(namespace, [old for old, _ in pairs], OLD_TIME)
        for old, new in pairs:
            named = _named(namespace, new)
            as_contradiction += ids[old] in named.contradictions
            as_update += ids[old] in named.updates
    return ContradictionScores(len(pairs), as_contradiction, as_update)


def _search(namespace: Namespace, query: str, **extra) -> list[dict]:
    return search(namespace=namespace, query=query, limit=10, log=False, **extra).memories


def cue_contributions(updates: list[tuple[str, str]], related: list[tuple[str, str]]) -> list[dict]:
    """Each change cue's worth on the training pairs, judged pair by pair (the two texts'
    cosine, no other stored memories): update pairs found only with it, related pairs
    flagged as updates only because of it. Cues that never decide a pair are left out."""

    def verdicts(pairs, ignore=frozenset()):
        return [detector.judge_pair(o, n, s, ignore_cues=ignore).is_update for (o, n), s in pairs]

    def with_similarity(pairs):
        first = embed_texts([a for a, _ in pairs])
        second = embed_texts([b for _, b in pairs])
        return list(zip(pairs, (first * second).sum(axis=1).tolist(), strict=True))

    scored_updates, scored_related = with_similarity(updates), with_similarity(related)
    found, fired = verdicts(scored_updates), verdicts(scored_related)
    out = []
    for cue in detector.CHANGE_CUES:
        ignore = frozenset([cue])
        without_updates = verdicts(scored_updates, ignore)
        without_related = verdicts(scored_related, ignore)
        lost = sum(a and not b for a, b in zip(found, without_updates, strict=True))
        spared = sum(a and not b for a, b in zip(fired, without_related, strict=True))
        if lost or spared:
            out.append({"cue": cue, "updates_found_only_with_it": lost, "false_alarms": spared})
    return sorted(
        out, key=lambda c: (c["false_alarms"] - c["updates_found_only_with_it"], c["cue"])
    )
