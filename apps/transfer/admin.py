from __future__ import annotations

from django.contrib import admin

from .models import BatchJob


@admin.register(BatchJob)
class BatchJobAdmin(admin.ModelAdmin):
    """Batches written in the background (read-only: the runner owns them)."""

    list_display = ("id", "namespace", "state", "done", "total", "created", "queued_at", "door")
    list_filter = ("state", "door")
    exclude = ("items", "results")
    date_hierarchy = "queued_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
