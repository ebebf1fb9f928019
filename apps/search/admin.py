"""Admin for query logs (read-only history) and learned strategy weights."""

from __future__ import annotations

from django.contrib import admin

from .models import QueryLog, StrategyWeights


@admin.register(QueryLog)
class QueryLogAdmin(admin.ModelAdmin):
    list_display = [
        "query",
        "namespace",
        "mode",
        "intent",
        "result_count",
        "latency_ms",
        "evidence_gap",
        "was_useful",
        "created_at",
    ]
    list_filter = ["namespace", "mode", "intent", "evidence_gap", "fallback_retry", "was_useful"]
    search_fields = ["query"]
    date_hierarchy = "created_at"
    list_select_related = ["namespace"]

    def has_add_permission(self, request):
        return False  # logs are written by searches only

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    @admin.display(description="results")
    def result_count(self, obj):
        return len(obj.results or [])


@admin.register(StrategyWeights)
class StrategyWeightsAdmin(admin.ModelAdmin):
    list_display = [
        "namespace",
        "strategy",
        "weight",
        "usefulness_rate",
        "sample_size",
        "updated_at",
    ]
    list_filter = ["namespace", "strategy"]
    readonly_fields = ["usefulness_rate", "sample_size", "updated_at"]
