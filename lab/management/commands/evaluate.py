"""python manage.py evaluate DIR [--json FILE] [--disable STAGE ...] [--mode MODE] [--keep]
[--conversations 0-2] [--no-abstention] [--calibrate]"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.memories.models import Namespace
from apps.search import querylog
from apps.search.config import SearchSettings, search_settings
from apps.search.params import MODES
from apps.search.services import search
from apps.search.stages import STAGES, unknown_stages
from apps.transfer.transfer import read_jsonl
from lab import abstention, calibration, evaluation, stage_profile
from lab.ablation import ablation_runs


class Command(BaseCommand):
    help = (
        "Load a dataset (SPEC section 7 format) into fresh namespaces, run every query through "
        "search() and report recall@5/10/20, hit@10, nDCG@10, MRR and latency."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument("--json", dest="json_path", type=Path, help="Write the report here.")
        parser.add_argument(
            "--disable",
            nargs="+",
            action="extend",
            default=[],
            metavar="STAGE",
            help=f"Stages to switch off: {', '.join(STAGES)}",
        )
        parser.add_argument("--mode", choices=MODES, default="hybrid")
        parser.add_argument("--keep", action="store_true", help="Keep the loaded namespaces.")
        parser.add_argument(
            "--reuse",
            metavar="PREFIX",
            help="Query namespaces kept by an earlier --keep run (no import).",
        )
        parser.add_argument("--max-queries", type=int, default=0, help="Only the first N.")
        parser.add_argument(
            "--ablate",
            action="store_true",
            help="Run the reference configurations and the full pipeline minus each stage in "
            "turn (one process, one loaded dataset); the JSON gets a 'runs' table.",
        )
        parser.add_argument("--details", type=Path, help="Write per-query rows (JSON lines).")
        parser.add_argument(
            "--conversations",
            metavar="SPEC",
            help="Only these namespaces of the dataset: positions in order of appearance "
            "('0-2', '3-4', '0,2') or names ('conv-26,conv-30'); the abstention searches stay "
            "inside the selection.",
        )
        parser.add_argument(
            "--no-abstention",
            dest="abstain",
            action="store_false",
            help="Skip the abstention report (every query searched again in another namespace).",
        )
        parser.add_argument(
            "--profile",
            action="store_true",
            help="Print the cost of a search by stage (CPU ms, SQL statements) instead of the "
            "quality figures (lab/stage_profile.py); best with --reuse.",
        )
        parser.add_argument(
            "--calibrate",
            action="store_true",
            help="Fit the confidence estimate's logistic coefficients on this run's answerable "
            "and unanswerable searches and print them (with their AUROC and flag rates here).",
        )

    def handle(
        self,
        *args,
        directory: Path,
        json_path,
        disable,
        mode,
        keep,
        reuse,
        max_queries,
        details,
        ablate,
        verbosity,
        conversations,
        abstain: bool,
        calibrate: bool,
        profile: bool = False,
        **options,
    ):
        bad = unknown_stages(disable)
        if bad:
            raise CommandError(f"unknown stage(s) {', '.join(bad)}; known: {', '.join(STAGES)}")
        if not (directory / "queries.jsonl").exists():
            raise CommandError(f"{directory} has no queries.jsonl")
        only = self._selection(directory, conversations)
        prefix = reuse or evaluation.new_prefix()
        unanswerable: list[dict] = []
        try:
            if reuse:
                queries = evaluation.read_queries(directory, prefix, only)
            else:
                self.stderr.write(f"loading {directory} into namespaces {prefix}*")
                _, queries = evaluation.load_dataset(
                    directory, prefix, progress=verbosity > 0, only=only
                )
            if max_queries:
                queries = queries[:max_queries]
            self.stderr.write(
                f"running {len(queries)} queries (mode={mode}, disabled={','.join(disable) or '-'})"
            )
            config = search_settings().without(disable)
            if profile:
                cost = stage_profile.profile(queries, search, mode=mode, config=config)
                self.stdout.write(stage_profile.format_profile(cost))
                if json_path:
                    json_path.write_text(json.dumps(cost, indent=2))
                return
            rows = evaluation.run_queries(queries, search, mode=mode, config=config)
            if abstain or calibrate:
                self.stderr.write("abstention: each query in another namespace")
                unanswerable = abstention.run_unanswerable(
                    queries, search, mode=mode, config=config
                )
            runs = self._ablate(queries, config) if ablate else None
        finally:
            querylog.flush()
            if not keep and not reuse:
                Namespace.objects.filter(name__startswith=prefix).delete()
            elif keep:
                self.stderr.write(f"kept namespaces {prefix}* (reuse with --reuse {prefix})")
        result = evaluation.report(rows)
        result.update(
            mode=mode,
            disabled=list(disable),
            dataset=str(directory),
            conversations=list(only) if only else "all",
        )
        self.stdout.write(format_table(result))
        if unanswerable:
            result["abstention"] = abstention.abstention_report(rows, unanswerable)
            self.stdout.write(format_abstention(result["abstention"]))
        if calibrate and unanswerable:
            fitted = calibration.fit(rows, unanswerable)
            result["calibration"] = fitted
            self.stdout.write(calibration.format_fit(fitted))
        if runs:
            result["runs"] = runs
            self.stdout.write(format_runs(runs))
        if json_path:
            json_path.write_text(json.dumps(result, indent=2))
        if details:
            with open(details, "w") as handle:
                for row in rows:
                    handle.write(json.dumps(row, default=str) + "\n")
                for row in unanswerable:
                    handle.write(json.dumps(row | {"unanswerable": True}, default=str) + "\n")

    def _selection(self, directory: Path, spec: str | None) -> list[str] | None:
        if not spec:
            return None
        names = abstention.namespaces_in_order(read_jsonl(directory / "queries.jsonl"))
        try:
            return abstention.select_namespaces(names, spec)
        except ValueError as exc:
            raise CommandError(f"--conversations: {exc}") from exc

    def _ablate(self, queries: list[dict], base: SearchSettings) -> dict:
        runs = {}
        for name, (mode, disabled) in ablation_runs().items():
            config = base.without(disabled)
            rows = evaluation.run_queries(queries, search, mode=mode, config=config)
            runs[name] = evaluation.report(rows) | {"mode": mode, "disabled": disabled}
            overall = runs[name]["overall"]
            self.stderr.write(
                f"{name}: recall@10 {overall['recall@10']:.3f} ndcg@10 {overall['ndcg@10']:.3f}"
            )
        return runs


def format_runs(runs: dict) -> str:
    lines = ["", f"{'run':60s}{'R@10':>8s}{'nDCG@10':>9s}{'p95_ms':>9s}"]
    for name, result in runs.items():
        o = result["overall"]
        lines.append(
            f"{name[:60]:60s}{o['recall@10']:>8.3f}{o['ndcg@10']:>9.3f}{o['p95_ms']:>9.1f}"
        )
    return "\n".join(lines)


def format_abstention(report: dict) -> str:
    auroc = report["auroc"]
    return (
        f"\nabstention: flag rate {report['flag_rate_unanswerable']:.3f} on "
        f"{report['unanswerable_searches']} unanswerable searches, "
        f"{report['flag_rate_answerable']:.3f} on {report['answerable_searches']} answerable "
        f"(evidence in the top 10); AUROC of the confidence "
        f"{'-' if auroc is None else f'{auroc:.3f}'}"
    )


def format_table(result: dict) -> str:
    keys = evaluation.KEYS
    lines = [f"{'':14s}" + "".join(f"{k:>10s}" for k in keys)]
    rows = [("overall", result["overall"])] + list(result["by_category"].items())
    for name, metrics in rows:
        lines.append(f"{name:14s}" + "".join(f"{metrics[k]:>10.3f}" for k in keys))
    return "\n".join(lines)
