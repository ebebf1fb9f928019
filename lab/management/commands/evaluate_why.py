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
        parser.add_argument("--train", action="store_true", help="Only the training part.")
        parser.add_argument("--heldout", action="store_true", help="Only the held-out part.")
        parser.add_argument(
            "--fresh", action="store_true", help="Only the fresh held-out collection."
        )
        parser.add_argument(
            "--fresh2", action="store_true", help="Only the second fresh held-out collection."
        )
        parser.add_argument(
            "--fresh3", action="store_true", help="Only the third fresh held-out collection."
        )
        parser.add_argument(
            "--fresh4", action="store_true", help="Only the fourth fresh held-out collection."
        )
        parser.add_argument(
            "--fresh5", action="store_true", help="Only the fifth fresh held-out collection."
        )
        parser.add_argument(
            "--fresh6", action="store_true", help="Only the sixth fresh held-out collection."
        )
        parser.add_argument("--json", dest="json_path", type=Path, help="Write the report here.")
        parser.add_argument("--misses", action="store_true", help="List each missed question.")

    def handle(
        self,
        *args,
        train: bool,
        heldout: bool,
        fresh: bool,
        fresh2: bool,
        fresh3: bool,
        fresh4: bool,
        fresh5: bool,
        fresh6: bool,
        json_path,
        misses: bool,
        **options,
    ):
        rows = why.read_set()
        splits = [
            s
            for s, on in zip(
                why.SPLITS,
                (train, heldout, fresh, fresh2, fresh3, fresh4, fresh5, fresh6),
                strict=True,
            )
            if on
        ]
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
