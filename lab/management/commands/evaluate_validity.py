"""python manage.py evaluate_validity [--train] [--heldout] [--json FILE]

Facts that change: the possible-update detector's precision and recall on the labelled
training pairs, and the acceptance criteria on the held-out set (lab/validity.py)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from lab import validity


class Command(BaseCommand):
    help = "Measure possible_updates and time-aware search on the labelled validity sets."

    def add_arguments(self, parser):
        parser.add_argument("--train", action="store_true", help="Only the training pairs.")
        parser.add_argument("--heldout", action="store_true", help="Only the held-out set.")
        parser.add_argument(
            "--cues", action="store_true", help="Each change cue's worth on the training pairs."
        )
        parser.add_argument("--json", dest="json_path", type=Path, help="Write the report here.")

    def handle(
        self, *args, train: bool, heldout: bool, cues: bool, json_path: Path | None, **options
    ):
        both = not (train or heldout or cues)
        report = {}
        if cues:
            rows = validity.cue_contributions(
                validity.read_pairs("train_updates.txt"), validity.read_pairs("train_related.txt")
            )
            report["cues"] = rows
            self.stdout.write("cue: training updates found only with it / related pairs it flags")
            for row in rows:
                self.stdout.write(
                    f"  {row['cue']}: {row['updates_found_only_with_it']} / {row['false_alarms']}"
                )
        if train or both:
            updates = validity.read_pairs("train_updates.txt")
            related = validity.read_pairs("train_related.txt")
            scores = validity.detector_scores(updates, related, "train")
            report["train"] = scores.as_dict()
            self.stdout.write(
                f"training pairs: {scores.updates} updates, {scores.related} related; "
                f"precision {scores.precision:.3f}, recall {scores.recall:.3f} "
                f"(named the older fact {scores.found}, named only others "
                f"{scores.wrong_on_updates}, fired on related {scores.fired_on_related})"
            )
            negations = validity.contradiction_scores(
                validity.read_pairs("train_contradictions.txt"), "train"
            )
            report["train"].update(negations.as_dict())
            self.stdout.write(
                f"training negation pairs: {negations.contradictions}; queued as contradictions "
                f"{negations.as_contradiction}, offered as updates {negations.as_update}"
            )
        if heldout or both:
            held = validity.heldout_scores()
            report["heldout"] = held
            n = held["changes"]
            self.stdout.write(
                f"held-out: with supersedes, update top-3 and old not current "
                f"{held['search_current']}/{n}; as_of between, old top-3 and update left out "
                f"{held['search_as_of']}/{n}; possible_updates named the old fact "
                f"{held['possible_updates_named']}/{n}; fired on related true pairs "
                f"{held['possible_updates_fired_on_related']}/{held['related']}; extended "
                f"related set: anything queued {held['fired_on_extended_related']}/"
                f"{held['extended_related']}; negation pairs queued as contradictions "
                f"{held['negation_as_contradiction']}/{held['negation_contradictions']}, "
                f"offered as updates {held['negation_as_update']}"
            )
            for miss in held["search_misses"]:
                self.stdout.write(f"  miss: {miss}")
        if json_path:
            json_path.write_text(json.dumps(report, indent=2))
