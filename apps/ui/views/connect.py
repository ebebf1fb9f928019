"""Owner page "Connect an assistant": create a token (shown once), ready-to-paste client
configuration, list and revoke tokens."""

from __future__ import annotations

import sys

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from apps.access.models import ApiToken
from apps.access.services import token_create, token_revoke
from apps.memories.models import Namespace
from apps.oauth.resource import mcp_resource, public_base
from apps.oauth.services import connections_of

from ..access import Action, can, namespace_view
from ..forms import TokenForm

# One small template per client under templates/ui/connect/snippets/.
SNIPPETS = [
    ("claude-code-http", "Claude Code (HTTP)"),
    ("claude-code-stdio", "Claude Code (stdio)"),
    ("claude-desktop", "Claude Desktop (stdio)"),
    ("cursor-http", "Cursor (HTTP)"),
    ("cursor-stdio", "Cursor (stdio)"),
    ("curl", "curl (REST)"),
]


def snippets(request: HttpRequest, namespace: Namespace, raw_token: str) -> list[dict]:
    base = public_base(request)
    values = {
        "base_url": base,
        "mcp_url": f"{base}/mcp",
        "token": raw_token,
        "namespace": namespace.name,
        "python": sys.executable,
        "manage_py": str(settings.BASE_DIR / "manage.py"),
    }
    return [{"key": key, "label": label, "text": _snippet(key, values)} for key, label in SNIPPETS]


def _snippet(key: str, values: dict) -> str:
    return render_to_string(f"ui/connect/snippets/{key}.txt", values)


@namespace_view(Action.MANAGE)
def connect_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    form = TokenForm(request.POST or None)
    context = {"namespace": namespace, "form": form, "new_token": None, "snippets": None}
    if request.method == "POST" and form.is_valid():
        token, raw = token_create(
            name=form.cleaned_data["name"],
            namespaces=[namespace],
            read_only=form.cleaned_data["read_only"],
        )
        context.update(new_token=token, raw_token=raw, snippets=snippets(request, namespace, raw))
    else:
        context["snippets"] = snippets(request, namespace, "mh_YOUR_TOKEN")
    context["tokens"] = list(
        ApiToken.objects.filter(namespaces=namespace)
        .order_by("revoked", "-created_at")
        .prefetch_related("namespaces")
    )
    context.update(connections=connections_of(request.user), mcp_url=mcp_resource(request))
    for token in context["tokens"]:  # shown, so nobody revokes a shared token unawares
        token.shared_with = [n.name for n in token.namespaces.all() if n.pk != namespace.pk]
    return render(request, "ui/connect/page.html", context)


@namespace_view(Action.MANAGE)
@require_POST
def revoke(request: HttpRequest, namespace: Namespace, token_id: int) -> HttpResponse:
    token = ApiToken.objects.filter(namespaces=namespace, pk=token_id).first()
    if token is None:
        raise Http404("No such token.")
    others = token.namespaces.exclude(pk=namespace.pk)
    if any(not can(request.user, other, Action.MANAGE) for other in others):
        # One owner must not cut off an assistant that other namespaces' owners rely on.
        messages.error(
            request,
            f"Token '{token.name}' also serves {others.count()} other namespace(s) you do not "
            "manage; only someone who manages all of them (an administrator) can revoke it.",
        )
        return redirect("ui:connect", namespace=namespace.name)
    token_revoke(token=token)
    messages.success(request, f"Token '{token.name}' revoked.")
    return redirect("ui:connect", namespace=namespace.name)
