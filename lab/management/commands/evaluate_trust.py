"""python manage.py evaluate_trust [--heldout] [--show-misses] [--json FILE]

The trust checks on their labelled sets (lab/trust.py): injections and benign notes through the
risk check, credentials and look-alikes through the secrets check, every LoCoMo dev turn
through both, each against its target, and what each check costs per text. The risk check
reads each text with its sentence embedding, as on the write path (encoded once, kept under
var/; the encoding is not part of the cost shown: the write path computes it anyway)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from apps.trust import risk, secrets
from lab import trust


class Command(BaseCommand):
    help = "Score the risk and secrets checks on the labelled sets and the LoCoMo dev turns."

    def add_arguments(self, parser):
        parser.add_argument(
            "--heldout", action="store_true", help="Score the held-out sets instead of train."
        )
        parser.add_argument("--show-misses", action="store_true", help="List each miss.")
        parser.add_argument("--json", dest="json_path", type=Path, help="Write the report here.")

    def handle(self, *args, heldout: bool, show_misses: bool, json_path, **options):
        turns = trust.locomo_turns()
        report = {"scores": {}, "microseconds_per_text": {}}
        for split in trust.HELDOUT if heldout else ("train",):
            report["scores"][split] = self._split(split, turns, show_misses)
        report["scores"]["locomo"] = self._split("LoCoMo", turns, show_misses)
        vectors = dict(zip(turns, trust.vectors_of(turns), strict=True))

        def assess(text: str) -> list:  # with the vector the write path would hand it
            return risk.assess(text, embedding=vectors[text])

        for name, check in (("risk.assess", assess), ("find_secrets", secrets.find_secrets)):
            cost = trust.microseconds_per_text(check, turns)
            report["microseconds_per_text"][name] = cost
            self.stdout.write(f"{name}: {cost:.1f} us per LoCoMo turn ({len(turns)} turns)")
        if json_path:
            json_path.write_text(json.dumps(report, indent=2))

    def _split(self, split: str, turns: list[str], show_misses: bool) -> dict:
        scores = trust.score_locomo(turns) if split == "LoCoMo" else trust.score_split(split)
        report = {}
        for score in scores:
            verdict = "ok" if score.meets_target else "MISSES TARGET"
            comparison, bound = trust.TARGETS[score.name]
            label = score.name if split == "LoCoMo" else f"{split} {score.name}"
            self.stdout.write(
                f"{label}: {score.flagged}/{score.total} ({score.share:.1%}),"
                f" target {comparison} {bound:.0%}: {verdict}"
            )
            report[score.name] = {
                "flagged": score.flagged,
                "total": score.total,
                "share": score.share,
                "meets_target": score.meets_target,
            }
            if show_misses:
                for miss in score.misses:
                    self.stdout.write(f"  miss: {json.dumps(miss, ensure_ascii=True)[:400]}")
        return report
