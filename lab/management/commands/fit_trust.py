"""python manage.py fit_trust [--ordinary N] [--cv-only] [--json FILE]

Rebuilds the risk check's learned scorer (apps/trust/scorer_weights.npz) from the labelled sets
and ordinary text (lab/trust_fit.py): first leave-one-split-out cross-validation, which picks
the two thresholds (wording alone; wording and meaning) and prints what each left-out split
scored, then the fit on everything. The texts' sentence embeddings are encoded once and kept
under var/ (lab/trust_vectors.py): the first run encodes about 13,000 texts."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from apps.trust import scorer
from lab import trust, trust_fit
from lab.trust_vectors import Vectors


class Command(BaseCommand):
    help = "Fit the risk check's learned scorer and choose its thresholds by cross-validation."

    def add_arguments(self, parser):
        parser.add_argument(
            "--ordinary", type=int, default=30000, help="Scale texts drawn as ordinary text."
        )
        parser.add_argument(
            "--cv-only", action="store_true", help="Cross-validate; leave the weights as they are."
        )
        parser.add_argument("--json", dest="json_path", type=Path, help="Write the report here.")

    def handle(self, *args, ordinary: int, cv_only: bool, json_path, **options):
        texts = trust_fit.scale_texts(ordinary)
        vectors = Vectors()
        self.stderr.write(f"{len(texts)} ordinary windows; cross-validating ...")
        folds = trust_fit.cross_validate(texts, vectors.of, locomo=trust.locomo_turns())
        thresholds = {
            "wording": trust_fit.choose_threshold(folds, joint=False),
            "joint": trust_fit.choose_threshold(folds, joint=True),
        }
        report = {"thresholds": thresholds, "folds": {}, "pooled": {}}
        for name, threshold in thresholds.items():
            joint = name == "joint"
            for fold in folds:
                shares = trust_fit.shares_at([fold], threshold, joint=joint)
                report["folds"].setdefault(fold.split, {})[name] = shares
                self.stdout.write(
                    f"{name} {threshold}, left out {fold.split}: injections"
                    f" {shares['injections']:.1%}, benign {shares['benign']:.1%}"
                )
            pooled = report["pooled"][name] = trust_fit.shares_at(folds, threshold, joint=joint)
            self.stdout.write(
                f"{name} {threshold}: pooled injections {pooled['injections']:.1%}, benign"
                f" {pooled['benign']:.2%}, ordinary {pooled['ordinary']:.3%},"
                f" LoCoMo {pooled['locomo']:.2%}"
            )
        if not cv_only:
            model = trust_fit.fit_all(texts, vectors.of, thresholds["wording"], thresholds["joint"])
            trust_fit.save(model)
            self.stdout.write(f"weights written to {scorer.WEIGHTS}")
        if json_path:
            json_path.write_text(json.dumps(report, indent=2))
