"""Measuring the why path (tooling, never imported by runtime code).

Data: data/why_chains.jsonl and data/why_nolink_*.jsonl, each written before the tuning it
was used for. Each line is either
- a decision chain ("kind": "chain"): 2-4 memories written as a team's notes, their causal
  edges ([from, relation, to] by key), a why-question whose answer is the cause, for many an
  effect question whose answer is what followed, and distractors that share words with the
  chain but are linked to nothing; or
- a memory with no causal link ("kind": "nolink") and a why or effect question about it, some
  with distractors; many share words with a linked chain of their part, so a linked memory
  ranks near the unlinked one the question is about.
Every line has a split: "train" (the only part looked at while tuning the why path's
constants) or "heldout" (scored, never tuned on).

Each split is loaded into one scratch namespace of its own (chains, distractors and the
unlinked memories together, so every question meets them all), the questions go through
search() as any door sends them, and the namespace is removed afterwards. A why-question counts
when the cause memory is in the top 3 and the returned path names it; an effect question
likewise with the effect; a no-link question when no path is claimed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from apps.memories.models import Memory
from apps.memories.services import edge_create, memory_batch_create, memory_create
from apps.search.services import search

from .validity import scratch_namespace

DATA = Path(__file__).parent / "data" / "why_chains.jsonl"
NOLINK = sorted(DATA.parent.glob("why_nolink_*.jsonl"))
# Fresh collections (why_fresh.jsonl, why_fresh2.jsonl, ...), each by an author who saw none of
# the other sets nor the why path, committed before it was first scored (docs/benchmarks.md says
# which were tuned on after).
FRESH = sorted(DATA.parent.glob("why_fresh*.jsonl"))
SPLITS = ("train", "heldout", *(path.stem.removeprefix("why_") for path in FRESH))
TOP = 3
CREATED = "2025-05-01"


def read_set(paths: list[Path] | None = None) -> list[dict]:
    rows = []
    for path in paths or [DATA, *NOLINK, *FRESH]:
        lines = path.read_text(encoding="utf-8").splitlines()
        rows += [json.loads(line) for line in lines if line.strip()]
    return rows


@dataclass
class Outcome:
    questions: int = 0
    passed: int = 0
    misses: list[dict] = field(default_factory=list)

    def add(self, ok: bool, miss: dict) -> None:
        self.questions += 1
        self.passed += ok
        if not ok:
            self.misses.append(miss)

    @property
    def share(self) -> float:
        return self.passed / self.questions if self.questions else 0.0

    def as_dict(self) -> dict:
        return {
            "questions": self.questions,
            "passed": self.passed,
            "share": round(self.share, 3),
            "misses": self.misses,
        }


def load(namespace, rows: list[dict]) -> dict[tuple[str, str], str]:
    """Store every row's memories and edges; (row id, key) -> memory id. A `supersedes` edge
    is written as a superseding memory (its older fact's validity ends, as at any door)."""
    superseding = {(r["id"], e[0]) for r in rows for e in r["edges"] if e[1] == "supersedes"}
    items, keys = [], []
    for row in rows:
        for key, text in row["memories"].items():
            if (row["id"], key) not in superseding:
                items.append({"content": text, "created_at": CREATED})
                keys.append((row["id"], key))
        for index, text in enumerate(row.get("distractors", ())):
            items.append({"content": text, "created_at": CREATED})
            keys.append((row["id"], f"distractor-{index}"))
    results = memory_batch_create(namespace=namespace, items=items)
    ids = {key: str(r.memory.pk) for key, r in zip(keys, results, strict=True)}
    for row_id, key in sorted(superseding):
        row = next(r for r in rows if r["id"] == row_id)
        older = [ids[(row_id, e[2])] for e in row["edges"] if e[0] == key and e[1] == "supersedes"]
        made = memory_create(namespace=namespace, content=row["memories"][key], supersedes=older)
        ids[(row_id, key)] = str(made.memory.pk)
    memories = {str(k): m for k, m in Memory.objects.in_bulk(ids.values()).items()}
    for row in rows:
        for source, relation, target in row["edges"]:
            if relation == "supersedes":
                continue
            edge_create(
                source=memories[ids[(row["id"], source)]],
                target=memories[ids[(row["id"], target)]],
                relation=relation,
            )
    return ids


def _asked(namespace, query: str) -> tuple[list[str], list[dict]]:
    """(result ids, the path's steps) for one question."""
    response = search(namespace=namespace, query=query, limit=10, log=False)
    return [m["id"] for m in response.memories], response.path


def _chain(path: list[dict]) -> str:
    return " | ".join(f"{s['reads'] or ''} {s['title']}".strip() for s in path)


def score_split(rows: list[dict], split: str) -> dict:
    rows = [r for r in rows if r["split"] == split]
    why, effect, nolink = Outcome(), Outcome(), Outcome()
    with scratch_namespace(f"why-{split}") as namespace:
        ids = load(namespace, rows)
        for row in rows:
            if row["kind"] == "nolink":
                results, path = _asked(namespace, row["query"])
                nolink.add(not path, {"query": row["query"], "path": _chain(path)})
                continue
            for question, outcome, answer in (
                (row["why"], why, "cause"),
                (row.get("effect"), effect, "effect"),
            ):
                if question is None:
                    continue
                wanted = ids[(row["id"], question[answer])]
                results, steps = _asked(namespace, question["query"])
                path = [s["id"] for s in steps]
                ok = wanted in results[:TOP] and wanted in path
                outcome.add(
                    ok,
                    {
                        "query": question["query"],
                        "rank": results.index(wanted) + 1 if wanted in results else None,
                        "in_path": wanted in path,
                        "path": _chain(steps),
                    },
                )
    return {"why": why.as_dict(), "effect": effect.as_dict(), "no_link": nolink.as_dict()}
