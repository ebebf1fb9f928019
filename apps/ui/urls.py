"""URLs of the web UI, mounted at / by memoryhub/urls.py."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import path, reverse_lazy
from django.utils.functional import lazy
from django.views.generic import RedirectView

from .views import (
    analytics,
    browse,
    conflicts,
    connect,
    duplicates,
    edit,
    graph,
    history,
    members,
    memory,
    missed,
    policies,
    recheck,
    review,
    search,
    stale,
    transfer,
)

app_name = "ui"
FAVICON = lazy(static, str)("ui/favicon.svg")

urlpatterns = [
    # Browsers ask for /favicon.ico on pages without an icon link (admin, API docs).
    path("favicon.ico", RedirectView.as_view(url=FAVICON, permanent=True)),
    path("", search.search_page, name="search"),
    path("explain/", search.explain_page, name="explain"),
    path("feedback/", search.feedback, name="feedback"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="ui/auth/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "password/",
        auth_views.PasswordChangeView.as_view(
            template_name="ui/auth/password.html", success_url=reverse_lazy("ui:password_done")
        ),
        name="password",
    ),
    path(
        "password/done/",
        auth_views.PasswordChangeDoneView.as_view(template_name="ui/auth/password_done.html"),
        name="password_done",
    ),
    path("ns/<slug:namespace>/memories/", browse.browse_page, name="browse"),
    path("ns/<slug:namespace>/memories/bulk/", browse.bulk_action, name="bulk"),
    path("ns/<slug:namespace>/memories/new/", edit.create_page, name="create"),
    path("ns/<slug:namespace>/infer-tags/", edit.infer_tags_partial, name="infer_tags"),
    path("ns/<slug:namespace>/connect/", connect.connect_page, name="connect"),
    path("ns/<slug:namespace>/members/", members.members_page, name="members"),
    path("ns/<slug:namespace>/settings/", policies.policies_page, name="policies"),
    path("ns/<slug:namespace>/trash/", history.trash_page, name="trash"),
    path("ns/<slug:namespace>/graph/", graph.graph_page, name="graph"),
    path("ns/<slug:namespace>/graph/data/", graph.graph_data, name="graph_data"),
    path("ns/<slug:namespace>/graph/link/", graph.graph_link, name="graph_link"),
    path("ns/<slug:namespace>/analytics/", analytics.analytics_page, name="analytics"),
    path("ns/<slug:namespace>/transfer/", transfer.transfer_page, name="transfer"),
    path("ns/<slug:namespace>/transfer/import/", transfer.import_start, name="import_start"),
    path(
        "ns/<slug:namespace>/transfer/import/<str:run_id>/",
        transfer.import_progress,
        name="import_progress",
    ),
    path(
        "ns/<slug:namespace>/transfer/import/<str:run_id>/cancel/",
        transfer.import_cancel,
        name="import_cancel",
    ),
    path("ns/<slug:namespace>/export.jsonl", transfer.export_jsonl_view, name="export_jsonl"),
    path("ns/<slug:namespace>/export.zip", transfer.export_markdown_view, name="export_markdown"),
    path("ns/<slug:namespace>/queues/stale/", stale.stale_page, name="stale"),
    path("ns/<slug:namespace>/queues/review/", review.review_page, name="review"),
    path("ns/<slug:namespace>/queues/review/act/", review.review_act, name="review_act"),
    path("ns/<slug:namespace>/queues/recheck/", recheck.recheck_page, name="recheck"),
    path("ns/<slug:namespace>/queues/recheck/act/", recheck.recheck_act, name="recheck_act"),
    path("ns/<slug:namespace>/queues/stale/act/", stale.stale_act, name="stale_act"),
    path("ns/<slug:namespace>/queues/missed/", missed.missed_page, name="missed"),
    path("ns/<slug:namespace>/queues/duplicates/", duplicates.duplicates_page, name="duplicates"),
    path(
        "ns/<slug:namespace>/queues/duplicates/act/",
        duplicates.duplicates_act,
        name="duplicates_act",
    ),
    path("ns/<slug:namespace>/queues/conflicts/", conflicts.conflicts_page, name="conflicts"),
    path(
        "ns/<slug:namespace>/queues/conflicts/act/", conflicts.conflicts_act, name="conflicts_act"
    ),
    path(
        "ns/<slug:namespace>/queues/missed/dismiss/", missed.missed_dismiss, name="missed_dismiss"
    ),
    path(
        "ns/<slug:namespace>/queues/missed/bring-back/",
        missed.missed_bring_back,
        name="missed_bring_back",
    ),
    path(
        "ns/<slug:namespace>/trash/<int:entry_id>/restore/",
        history.trash_restore_view,
        name="trash_restore",
    ),
    path("ns/<slug:namespace>/tokens/<int:token_id>/revoke/", connect.revoke, name="revoke"),
    path("memories/<str:memory_id>/", memory.memory_page, name="memory"),
    path("memories/<str:memory_id>/edit/", edit.edit_page, name="edit"),
    path("memories/<str:memory_id>/history/", history.history_page, name="history"),
    path(
        "memories/<str:memory_id>/revisions/<int:revision_id>/restore/",
        history.restore_version,
        name="restore_version",
    ),
    path("memories/<str:memory_id>/similar/", search.similar_page, name="similar"),
    path("memories/<str:memory_id>/chunks/", memory.chunks_partial, name="chunks"),
    path("memories/<str:memory_id>/link/", memory.link, name="link"),
    path(
        "memories/<str:memory_id>/link/candidates/",
        memory.link_candidates,
        name="link_candidates",
    ),
    path("memories/<str:memory_id>/unlink/<int:edge_id>/", memory.unlink, name="unlink"),
    path(
        "memories/<str:memory_id>/revisions/<int:revision_id>/undo/",
        history.undo_change,
        name="undo_change",
    ),
    path("memories/<str:memory_id>/archive/", memory.archive, name="archive"),
    path("memories/<str:memory_id>/delete/", memory.delete, name="delete"),
]
