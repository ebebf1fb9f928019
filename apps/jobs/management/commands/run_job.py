"""manage.py run_job pagerank|feedback_weights|decay|reembed|trash_purge [--namespace NAME]
[--async]"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.jobs.models import Job, JobRun, namespace_model
from apps.jobs.services import job_execute, run_summary
from apps.jobs.tasks import run_job_task
from memoryhub.celery import app


class Command(BaseCommand):
    help = "Run one background job now and print what it changed."

    def add_arguments(self, parser):
        parser.add_argument("job", choices=Job.values)
        parser.add_argument("--namespace", help="Only this namespace (default: all).")
        parser.add_argument(
            "--async",
            dest="use_broker",
            action="store_true",
            help="Send it through the broker to a worker and wait for the result.",
        )
        parser.add_argument(
            "--timeout", type=float, default=3600, help="Seconds to wait (--async)."
        )

    def handle(self, *args, job, namespace=None, use_broker=False, timeout=3600.0, **options):
        namespace_id = None
        if namespace:
            found = namespace_model().objects.filter(name=namespace).first()
            if found is None:
                raise CommandError(f"No namespace named {namespace!r}.")
            namespace_id = found.pk
        summary = (
            self._through_broker(job, namespace_id, timeout)
            if use_broker
            else self._in_process(job, namespace_id)
        )
        self._print(summary)
        if summary["status"] != "succeeded":
            raise CommandError(f"{job} failed:\n{summary['error']}")

    def _in_process(self, job: str, namespace_id: int | None) -> dict:
        bar = None

        def progress(done: int, total: int) -> None:
            nonlocal bar
            if bar is None:
                bar = tqdm(total=total, unit="memory", desc=job, file=self.stderr._out)
            bar.total = total
            bar.update(done - bar.n)

        kwargs = {"progress": progress} if job == Job.REEMBED else {}
        try:
            run = job_execute(job, namespace_id=namespace_id, trigger="command", **kwargs)
        except Exception:
            run = JobRun.objects.filter(job=job, trigger="command").first()
            if run is None:
                raise
        finally:
            if bar is not None:
                bar.close()
        return run_summary(run)

    def _through_broker(self, job: str, namespace_id: int | None, timeout: float) -> dict:
        if app.conf.task_always_eager:
            raise CommandError("--async needs a broker: set CELERY_BROKER_URL (and run a worker).")
        result = run_job_task.apply_async(
            kwargs={"job": job, "namespace_id": namespace_id, "trigger": "command"}
        )
        self.stderr.write(f"queued {job} as task {result.id}; waiting for a worker...")
        try:
            value = result.get(timeout=timeout, propagate=False)
        except Exception as exc:  # timeout, broker gone
            raise CommandError(f"No result for task {result.id}: {exc}") from exc
        if isinstance(value, dict):
            return value
        return {"job": job, "status": "failed", "error": repr(value), "changes": {}}

    def _print(self, summary: dict) -> None:
        changes = dict(summary.get("changes") or {})
        per_namespace = changes.pop("per_namespace", {})
        self.stdout.write(
            f"{summary.get('job', '?')}: {summary['status']} in {summary.get('duration_ms')} ms"
        )
        for key, value in changes.items():
            self.stdout.write(f"  {key}: {value}")
        for name, ns_changes in per_namespace.items():
            self.stdout.write(f"  [{name}] {json.dumps(ns_changes, default=str)}")
