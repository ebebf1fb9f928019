"""python manage.py fit_ranker DIR --reuse PREFIX [--features FILE] [--train 0-2] [--l2 X]
[--pointwise] [--write]

Collects every query's head and features through search() (or reads them from --features when
that file exists), fits the learned re-ranker on the --train conversations, and prints how
the re-ordered heads score on the training conversations and on the others. --write stores
the model as apps/search/pipeline/ranker.json (the file the read path loads)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.search.config import search_settings
from apps.search.pipeline import rerank_learned
from apps.search.services import search
from apps.transfer.transfer import read_jsonl
from lab import abstention, evaluation, rankfit


class Command(BaseCommand):
    help = "Fit the learned re-ranker (pipeline/rerank_learned.py) on benchmark conversations."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument("--reuse", metavar="PREFIX", help="Namespaces kept by evaluate --keep.")
        parser.add_argument("--features", type=Path, help="Collected heads (read, else written).")
        parser.add_argument("--train", default="", help="Conversations to fit on (default all).")
        parser.add_argument("--l2", type=float, default=0.01)
        parser.add_argument("--head", type=int, default=rerank_learned.HEAD)
        parser.add_argument("--pointwise", action="store_true")
        parser.add_argument("--write", action="store_true", help="Store the fitted model.")
        parser.add_argument(
            "--disable", nargs="+", action="extend", default=[], metavar="STAGE",
            help="Stages off while the features are collected (as the read path will run).",
        )  # fmt: skip

    def handle(self, *args, directory: Path, reuse, features, train, l2, head, pointwise, write,
               disable, **options):  # fmt: skip
        if features and features.exists():
            samples = rankfit.load(features)
        else:
            if not reuse:
                raise CommandError("--reuse PREFIX is needed to collect the features")
            queries = evaluation.read_queries(directory, reuse)
            config = search_settings().without(disable)
            samples, _ = rankfit.collect(queries, reuse, search, evaluation.run_queries, config)
            if features:
                rankfit.save(samples, features)
        names = abstention.namespaces_in_order(read_jsonl(directory / "queries.jsonl"))
        chosen = set(abstention.select_namespaces(names, train)) if train else set(names)
        fitted_on = [s for s in samples if s.namespace in chosen]
        held_out = [s for s in samples if s.namespace not in chosen]
        model = rankfit.fit(fitted_on, l2=l2, pairwise=not pointwise, head=head)
        self.stdout.write(rankfit.describe(model))
        for label, part in (("fitted on", fitted_on), ("held out", held_out)):
            if not part:
                continue
            before, after = rankfit.judge(part, None), rankfit.judge(part, model)
            self.stdout.write(f"\n{label} ({len(part)} queries)")
            for name in before:
                b, a = before[name], after[name]
                self.stdout.write(
                    f"  {name:12s} R@10 {b['recall@10']:.3f} -> {a['recall@10']:.3f}   "
                    f"nDCG@10 {b['ndcg@10']:.3f} -> {a['ndcg@10']:.3f}   (n={b['n']})"
                )
        if write:
            rerank_learned.WEIGHTS_FILE.write_text(json.dumps(model.as_dict(), indent=1) + "\n")
            rerank_learned.load.cache_clear()
            self.stdout.write(f"wrote {rerank_learned.WEIGHTS_FILE}")
