"""People's OAuth connections in the admin (the registered applications themselves are listed
by django-oauth-toolkit's own admin, under "Django OAuth Toolkit")."""

from __future__ import annotations

from django.contrib import admin

from apps.access.models import OAuthConnection

from .services import connection_revoke


@admin.register(OAuthConnection)
class OAuthConnectionAdmin(admin.ModelAdmin):
    list_display = ["application", "user", "namespace_list", "read_only", "last_used_at"]
    list_filter = ["read_only", "namespaces"]
    list_select_related = ["application", "user"]
    search_fields = ["application__name", "application__client_id", "user__username"]
    readonly_fields = ["application", "user", "created_at", "updated_at", "last_used_at"]
    filter_horizontal = ["namespaces"]
    actions = ["revoke"]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("namespaces")

    def has_add_permission(self, request) -> bool:
        return False  # a connection is made by its person's consent, not here

    @admin.display(description="namespaces")
    def namespace_list(self, obj: OAuthConnection) -> str:
        return ", ".join(ns.name for ns in obj.namespaces.all())

    @admin.action(description="Revoke selected connections (their tokens stop at once)")
    def revoke(self, request, queryset):
        count = 0
        for connection in queryset.select_related("application", "user"):
            connection_revoke(connection=connection)
            count += 1
        self.message_user(request, f"Revoked {count} connection(s).")
