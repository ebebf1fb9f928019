"""Admin: revisions are read-only; trash entries can be restored (through the service)."""

from __future__ import annotations

from django.contrib import admin, messages

from apps.core.exceptions import ValidationFailed

from . import services
from .models import MemoryRevision, TrashEntry


@admin.register(MemoryRevision)
class MemoryRevisionAdmin(admin.ModelAdmin):
    list_display = ["created_at", "memory_id", "action", "door", "actor_label", "namespace"]
    list_filter = ["action", "door", "namespace", "created_at"]
    search_fields = ["memory_id", "actor_label"]
    list_select_related = ["namespace"]
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in MemoryRevision._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # history that loses nothing: only the trash purge removes revisions


@admin.register(TrashEntry)
class TrashEntryAdmin(admin.ModelAdmin):
    list_display = ["__str__", "memory_id", "namespace", "deleted_by", "door", "deleted_at"]
    list_filter = ["namespace", "door", "deleted_at"]
    search_fields = ["memory_id", "deleted_by"]
    list_select_related = ["namespace"]
    readonly_fields = [f.name for f in TrashEntry._meta.fields]
    actions = ["restore"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.action(description="Restore selected memories (same ids, with their edges)")
    def restore(self, request, queryset):
        restored, skipped = 0, 0
        for entry in queryset:
            try:
                result = services.trash_restore(entry=entry, actor=request.user, door="admin")
            except ValidationFailed as exc:
                self.message_user(request, exc.summary(), messages.ERROR)
                continue
            restored += 1
            skipped += len(result.edges_skipped)
        note = f" ({skipped} edges skipped: their other memory is gone)" if skipped else ""
        self.message_user(request, f"Restored {restored} memories{note}.")
