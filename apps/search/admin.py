"""Admin for query logs (read-only history) and learned strategy weights."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from .models import QueryLog, StrategyWeights


@admin.register(QueryLog)
# ModelAdmin is generic only in django-stubs: subscripted here it fails at run time.
class QueryLogAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
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

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # logs are written by searches only

    def get_readonly_fields(self, request: HttpRequest, obj: QueryLog | None = None) -> list[str]:
        return [f.name for f in self.model._meta.fields]

    @admin.display(description="results")
    def result_count(self, obj: QueryLog) -> int:
        return len(obj.results or [])


@admin.register(StrategyWeights)
class StrategyWeightsAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # as above
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
