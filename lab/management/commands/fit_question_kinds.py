"""python manage.py fit_question_kinds [--cv-only]

Rebuilds the learned reading of question kinds (apps/search/pipeline/question_kind_weights.npz)
from the labelled questions (lab/question_kinds.py): five-fold cross-validation first, which
picks the causal threshold and prints what the held-out folds scored, then the fit on all."""

from __future__ import annotations

from dataclasses import replace

from django.core.management.base import BaseCommand

from lab import question_kinds


class Command(BaseCommand):
    help = "Fit the learned reading of why- and what-followed questions."

    def add_arguments(self, parser):
        parser.add_argument(
            "--cv-only", action="store_true", help="Cross-validate; leave the weights as they are."
        )

    def handle(self, *args, cv_only: bool, **options):
        texts, labels = question_kinds.labelled()
        counts = {label: labels.count(label) for label in sorted(set(labels))}
        self.stdout.write(f"{len(texts)} questions: {counts}")
        scored = question_kinds.cross_validate(texts, labels)
        threshold = question_kinds.choose_threshold(scored)
        shares = question_kinds.report(scored, threshold)
        self.stdout.write(
            f"threshold {threshold}: held-out folds, causal found {shares['causal found']:.1%},"
            f" direction right {shares['direction right']:.1%},"
            f" others taken {shares['others taken']:.1%}"
        )
        if not cv_only:
            kinds = replace(question_kinds.fit(texts, labels), threshold=threshold)
            question_kinds.save(kinds)
            self.stdout.write(f"saved {question_kinds.question_kind.WEIGHTS}")
