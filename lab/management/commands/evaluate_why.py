"""python manage.py evaluate_why [--train] [--heldout] [--fresh] ... [--fresh6] [--json FILE]

"Why" answered along causal links: on the labelled decision chains (lab/why.py), the share of
why-questions whose cause is in the top 3 and named by the returned path, the same for effect
questions, and the no-link questions for which no path is claimed."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from lab import why


class Command(BaseCommand):
    help = "Score the why path on the labelled decision chains (train and held-out)."

    def add_arguments(self, parser):
        for split in why.SPLITS:
            parser.add_argument(
                f"--{split}", action="store_true", help=f"Only the {split} part (any together)."
            )
        parser.add_argument("--json", dest="json_path", type=Path, help="Write the report here.")
        parser.add_argument("--misses", action="store_true", help="List each missed question.")

    def handle(self, *args, json_path, misses: bool, **options):
        rows = why.read_set()
        splits = [split for split in why.SPLITS if options[split]]
        report = {}
        for split in splits or why.SPLITS:
            scores = why.score_split(rows, split)
            report[split] = scores
            parts = [
                f"{name} {s['passed']}/{s['questions']} ({s['share']:.1%})"
                for name, s in scores.items()
            ]
            self.stdout.write(f"{split}: " + ", ".join(parts))
            if misses:
                for name, s in scores.items():
                    for miss in s["misses"]:
                        self.stdout.write(f"  {name} miss: {json.dumps(miss)}")
        if json_path:
            json_path.write_text(json.dumps(report, indent=2))
