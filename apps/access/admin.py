"""API tokens (created here, the secret shown once; scoped; revoked) and people's namespace
roles in the admin."""

from __future__ import annotations

from django.contrib import admin, messages

from .models import ApiToken, NamespaceMembership
from .services import token_create


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "namespace_list", "read_only", "revoked", "last_used_at"]
    list_filter = ["read_only", "revoked", "namespaces"]
    search_fields = ["name", "prefix", "namespaces__name"]
    filter_horizontal = ["namespaces"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
    actions = ["revoke"]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("namespaces")

    def get_fields(self, request, obj=None):
        fields = ["name", "namespaces", "read_only"]
        return fields if obj is None else [*fields, "revoked", *self.readonly_fields]

    @admin.display(description="namespaces")
    def namespace_list(self, obj: ApiToken) -> str:
        return ", ".join(ns.name for ns in obj.namespaces.all())

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            return
        # New token: the service makes the secret; the form then saves the namespaces onto it.
        token, raw = token_create(
            name=form.cleaned_data["name"],
            namespaces=form.cleaned_data["namespaces"],
            read_only=form.cleaned_data["read_only"],
        )
        for field in ("pk", "prefix", "key_hash", "created_at"):
            setattr(obj, field, getattr(token, field))
        obj._state.adding = False
        messages.warning(
            request, f"Token for '{token.name}': {raw} — copy it now, it is not shown again."
        )

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request, queryset):
        count = queryset.update(revoked=True)
        self.message_user(request, f"Revoked {count} token(s).")


@admin.register(NamespaceMembership)
class NamespaceMembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "namespace", "role", "created_at"]
    list_filter = ["role", "namespace"]
    list_select_related = ["user", "namespace"]
    search_fields = ["user__username", "user__email", "namespace__name"]
    autocomplete_fields = ["user", "namespace"]
    readonly_fields = ["created_at"]
