"""Admin for memories, tags, namespaces and edges. Writes go through the services."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Count

from apps.core.exceptions import ValidationFailed

from . import services
from .models import CausalEdge, Memory, Namespace, Tag
from .validation import validate_memory_input


class MemoryAdminForm(forms.ModelForm):
    """Runs the write path's validation so the form shows the same errors as the API."""

    class Meta:
        model = Memory
        fields = [
            "namespace",
            "title",
            "content",
            "category",
            "tier",
            "tags",
            "importance",
            "file_path",
            "source",
            "trigger_phrases",
            "metadata",
            "archived",
        ]

    def clean(self):
        data = super().clean()
        payload = {k: data[k] for k in services.UPDATABLE - {"tags"} if data.get(k) is not None}
        payload["tags"] = [t.name for t in data.get("tags") or []]
        try:
            validate_memory_input(payload)
        except ValidationFailed as exc:
            for field, problems in exc.errors.items():
                name = field.split("[")[0]
                self.add_error(name if name in self.fields else None, problems)
        return data


@admin.register(Namespace)
class NamespaceAdmin(admin.ModelAdmin):
    list_display = ["name", "description", "memory_count", "created_at"]
    search_fields = ["name", "description"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_memories=Count("memories"))

    @admin.display(ordering="_memories", description="memories")
    def memory_count(self, obj):
        return obj._memories


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ["name", "memory_count"]
    search_fields = ["name"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_memories=Count("memories"))

    @admin.display(ordering="_memories", description="memories")
    def memory_count(self, obj):
        return obj._memories

    def save_model(self, request, obj, form, change):
        """A rename changes every memory carrying the tag: through the service, recorded."""
        if not change:
            return super().save_model(request, obj, form, change)
        services.tag_rename(tag=obj, name=obj.name, actor=request.user, door="admin")

    def delete_model(self, request, obj):
        services.tag_delete(tag=obj, actor=request.user, door="admin")

    def delete_queryset(self, request, queryset):
        for tag in queryset:
            services.tag_delete(tag=tag, actor=request.user, door="admin")


class OutgoingEdgeInline(admin.TabularInline):
    model = CausalEdge
    fk_name = "source"
    fields = ["relation", "target", "strength", "created_at"]
    readonly_fields = ["created_at"]
    raw_id_fields = ["target"]
    extra = 0


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = [
        "short_content",
        "namespace",
        "category",
        "tier",
        "importance",
        "tag_list",
        "archived",
        "created_at",
    ]
    list_filter = ["namespace", "category", "tier", "archived", "origin_door", "created_at", "tags"]
    search_fields = ["content", "title", "external_id", "file_path", "source"]
    date_hierarchy = "created_at"
    list_select_related = ["namespace"]
    filter_horizontal = ["tags"]
    readonly_fields = [
        "id",
        "external_id",
        "content_hash",
        "embedding_model",
        "pagerank_score",
        "stability",
        "access_count",
        "last_accessed_at",
        "created_at",
        "updated_at",
    ]
    # Where it came from: set by the write path, never edited.
    provenance_fields = [
        "origin_door",
        "origin_person",
        "origin_credential",
        "origin_client",
        "provenance",
    ]
    fieldsets = [
        (None, {"fields": ["namespace", "title", "content", "category", "tier", "tags"]}),
        (
            "Details",
            {
                "fields": [
                    "importance",
                    "file_path",
                    "source",
                    "trigger_phrases",
                    "metadata",
                    "archived",
                ]
            },
        ),
        ("Provenance", {"classes": ["collapse"], "fields": provenance_fields}),
        ("Computed", {"classes": ["collapse"], "fields": readonly_fields}),
    ]
    readonly_fields = readonly_fields + provenance_fields
    form = MemoryAdminForm
    inlines = [OutgoingEdgeInline]
    actions = ["archive", "unarchive", "reembed", "merge"]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("tags")

    @admin.display(description="content")
    def short_content(self, obj):
        text = obj.title or obj.content
        return text[:90] + ("…" if len(text) > 90 else "")

    @admin.display(description="tags")
    def tag_list(self, obj):
        return ", ".join(t.name for t in obj.tags.all())

    def save_model(self, request, obj, form, change):
        who = {"actor": request.user, "door": "admin"}
        if change:
            fields = {
                name: form.cleaned_data[name]
                for name in form.changed_data
                if name in services.UPDATABLE | {"archived"}
            }
            if "tags" in fields:
                fields["tags"] = [t.name for t in fields["tags"] or []]
            # The form has already written its values onto `obj`: update the stored row, so the
            # revision sees what was there before.
            stored = Memory.objects.get(pk=obj.pk)
            stored = services.memory_update(memory=stored, **who, **fields)
            form.cleaned_data["tags"] = list(stored.tags.all())
            return
        data = {k: v for k, v in form.cleaned_data.items() if k in services.UPDATABLE}
        data["tags"] = [t.name for t in data.get("tags") or []]
        result = services.memory_create(namespace=obj.namespace, **who, **data)
        # save_related() then sets the form's tags: make them the stored set (inferred too).
        form.cleaned_data["tags"] = list(result.memory.tags.all())
        # The admin goes on with `obj` (tags, log entry, redirect): make it the stored row.
        obj.pk, obj._state.adding, obj._state.db = result.memory.pk, False, "default"
        form.instance = obj
        if not result.created:
            messages.warning(request, "Identical content exists; showing that memory.")

    def delete_model(self, request, obj):
        services.memory_delete(memory=obj, actor=request.user, door="admin")

    def delete_queryset(self, request, queryset):
        for memory in queryset:
            services.memory_delete(memory=memory, actor=request.user, door="admin")

    def save_formset(self, request, form, formset, change):
        """Inline edges go through edge_create/edge_delete, so they are recorded too."""
        if formset.model is not CausalEdge:
            return super().save_formset(request, form, formset, change)
        who = {"actor": request.user, "door": "admin"}
        formset.save(commit=False)
        for edge in formset.deleted_objects:
            services.edge_delete(edge=edge, **who)
        for edge, changed in formset.changed_objects:
            if set(changed) - {"strength"}:
                services.edge_delete(edge=CausalEdge.objects.get(pk=edge.pk), **who)
            _edge_save(edge, **who)
        for edge in formset.new_objects:
            _edge_save(edge, **who)

    @admin.action(description="Archive selected memories")
    def archive(self, request, queryset):
        count = services.memories_archive(memories=queryset, actor=request.user, door="admin")
        self.message_user(request, f"Archived {count} memories.")

    @admin.action(description="Unarchive selected memories")
    def unarchive(self, request, queryset):
        count = services.memories_archive(
            memories=queryset, archived=False, actor=request.user, door="admin"
        )
        self.message_user(request, f"Unarchived {count} memories.")

    @admin.action(description="Re-embed selected memories with the current model")
    def reembed(self, request, queryset):
        count = services.memories_reembed(memories=queryset, actor=request.user, door="admin")
        self.message_user(request, f"Re-embedded {count} memories.")

    @admin.action(description="Merge selected into the oldest (it supersedes the rest)")
    def merge(self, request, queryset):
        ordered = list(queryset.order_by("created_at"))
        if len(ordered) < 2:
            self.message_user(request, "Select at least two memories.", messages.WARNING)
            return
        try:
            keep = services.memories_merge(
                keep=ordered[0], others=ordered[1:], actor=request.user, door="admin"
            )
        except ValidationFailed as exc:
            self.message_user(request, exc.summary(), messages.ERROR)
            return
        self.message_user(request, f"Merged {len(ordered) - 1} memories into {keep}.")


@admin.register(CausalEdge)
class CausalEdgeAdmin(admin.ModelAdmin):
    list_display = ["source", "relation", "target", "strength", "namespace", "created_at"]
    list_filter = ["relation", "namespace"]
    search_fields = ["source__content", "target__content"]
    raw_id_fields = ["source", "target"]
    list_select_related = ["source", "target", "namespace"]

    def save_model(self, request, obj, form, change):
        who = {"actor": request.user, "door": "admin"}
        if change and set(form.changed_data) - {"strength"}:
            services.edge_delete(edge=CausalEdge.objects.get(pk=obj.pk), **who)
        saved = _edge_save(obj, **who)
        obj.pk = saved.pk

    def delete_model(self, request, obj):
        services.edge_delete(edge=obj, actor=request.user, door="admin")

    def delete_queryset(self, request, queryset):
        for edge in queryset:
            services.edge_delete(edge=edge, actor=request.user, door="admin")


def _edge_save(edge: CausalEdge, **who) -> CausalEdge:
    return services.edge_create(
        source=edge.source,
        target=edge.target,
        relation=edge.relation,
        strength=edge.strength,
        **who,
    )
