from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from .models import BatchJob


@admin.register(BatchJob)
# ModelAdmin is generic only in django-stubs: subscripted here it fails at run time.
class BatchJobAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Batches written in the background (read-only: the runner owns them)."""

    list_display = ("id", "namespace", "state", "done", "total", "created", "queued_at", "door")
    list_filter = ("state", "door")
    exclude = ("items", "results")
    date_hierarchy = "queued_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: BatchJob | None = None) -> bool:
        return False
