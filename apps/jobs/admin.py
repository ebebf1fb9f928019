"""Job history in the admin: every run, and the latest run of each job per scope."""

from __future__ import annotations

import json

from django.contrib import admin, messages
from django.db.models import QuerySet

from apps.jobs.models import JobRun, LatestJobRun
from apps.jobs.tasks import run_job_task


@admin.register(JobRun)
class JobRunAdmin(admin.ModelAdmin):
    list_display = [
        "job",
        "scope",
        "status",
        "trigger",
        "started_at",
        "duration_ms",
        "changed",
        "error_line",
    ]
    list_filter = ["job", "status", "trigger", "namespace"]
    search_fields = ["error", "task_id"]
    date_hierarchy = "started_at"
    actions = ["run_again"]
    readonly_fields = [f.name for f in JobRun._meta.fields] + ["changes_pretty"]
    exclude = ["changes"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="namespace", ordering="namespace__name")
    def scope(self, run: JobRun) -> str:
        return run.namespace.name if run.namespace_id else "(all)"

    @admin.display(description="what changed")
    def changed(self, run: JobRun) -> str:
        items = {k: v for k, v in (run.changes or {}).items() if k != "per_namespace"}
        return ", ".join(f"{k}={v}" for k, v in items.items() if not isinstance(v, dict))

    @admin.display(description="error")
    def error_line(self, run: JobRun) -> str:
        lines = [line for line in run.error.strip().splitlines() if line.strip()]
        return lines[-1][:120] if lines else ""

    @admin.display(description="changes")
    def changes_pretty(self, run: JobRun) -> str:
        return json.dumps(run.changes, indent=2, default=str)

    @admin.action(description="Run these jobs again now (queued to a worker, or in-process)")
    def run_again(self, request, queryset: QuerySet[JobRun]) -> None:
        seen = set()
        for run in queryset:
            key = (run.job, run.namespace_id)
            if key not in seen:
                seen.add(key)
                run_job_task.delay(job=run.job, namespace_id=run.namespace_id, trigger="admin")
        self.message_user(request, f"Started {len(seen)} job(s).", messages.SUCCESS)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("namespace")


@admin.register(LatestJobRun)
class LatestJobRunAdmin(JobRunAdmin):
    """One row per (job, namespace scope): when it last ran, how long, what changed, errors."""

    date_hierarchy = None

    def get_queryset(self, request):
        latest = (
            JobRun.objects.order_by("job", "namespace_id", "-started_at", "-id")
            .distinct("job", "namespace_id")
            .values("id")
        )
        return super().get_queryset(request).filter(id__in=latest)
