"""python manage.py fit_trust [--ordinary N] [--cv-only] [--json FILE]

Rebuilds the risk check's learned scorer (apps/trust/scorer_weights.npz) from the labelled sets
and ordinary text (lab/trust_fit.py): first leave-one-split-out cross-validation, which picks
the threshold and prints what each left-out split scored, then the fit on everything."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from apps.trust import scorer
from lab import trust_fit


class Command(BaseCommand):
    help = "Fit the risk check's learned scorer and choose its threshold by cross-validation."

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
        self.stderr.write(f"{len(texts)} ordinary windows; cross-validating ...")
        folds = trust_fit.cross_validate(texts)
        threshold = trust_fit.choose_threshold(folds)
        report = {"threshold": threshold, "folds": {}, "pooled": {}}
        for fold in folds:
            shares = trust_fit.shares_at([fold], threshold)
            report["folds"][fold.split] = {
                **shares,
                "injection_probabilities": fold.injections,
                "benign_probabilities": fold.benign,
            }
            self.stdout.write(
                f"left out {fold.split}: injections {shares['injections']:.1%},"
                f" benign {shares['benign']:.1%}, ordinary {shares['ordinary']:.2%}"
            )
        report["pooled"] = trust_fit.shares_at(folds, threshold)
        pooled = report["pooled"]
        self.stdout.write(
            f"threshold {threshold}: pooled injections {pooled['injections']:.1%},"
            f" benign {pooled['benign']:.1%}, ordinary {pooled['ordinary']:.2%}"
        )
        if not cv_only:
            injections, benign = trust_fit.training(trust_fit.FIT_SPLITS)
            model = trust_fit.fit(trust_fit.corpus(injections, benign, texts), threshold)
            trust_fit.save(model)
            self.stdout.write(f"weights written to {scorer.WEIGHTS}")
        if json_path:
            json_path.write_text(json.dumps(report, indent=2))
