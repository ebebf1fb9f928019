"""Owner page "Connect an assistant": create a token (shown once), ready-to-paste client
configuration, list and revoke tokens."""

from __future__ import annotations

import json
import shlex
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

from ..forms import TokenForm
from ..view_permissions import Action, can, namespace_view

# One small template per client under templates/ui/connect/snippets/.
SNIPPETS = [
    ("claude-code-http", "Claude Code (HTTP)"),
    ("claude-code-stdio", "Claude Code (stdio)"),
    ("claude-desktop", "Claude Desktop (stdio)"),
    # Claude Desktop over HTTP (docs/using.md): the mcp-remote bridge (Node.js) with a token.
    ("claude-desktop-http", "Claude Desktop (HTTP, through mcp-remote: needs Node.js)"),
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


# Recall at session start (docs/session-start.md): the repository's folder name and the branch
# as the query; outside a git checkout, the folder's name alone.
RECALL_QUERY = (
    '"query=$(basename "$(git rev-parse --show-toplevel 2>/dev/null || pwd)") '
    '$(git branch --show-current 2>/dev/null)"'
)


def session_start_command(base_url: str, namespace: str) -> str:
    """A shell command printing the namespace's best memories for the current repository, as
    the MCP memory_search tool's text. The token comes from $MEMORYHUB_TOKEN, never the file."""
    return " ".join(
        [
            "curl -sS --max-time 5 -G",
            shlex.quote(f"{base_url}/api/v1/search/"),
            '-H "Authorization: Bearer $MEMORYHUB_TOKEN"',
            "-H 'Accept: text/markdown'",
            "--data-urlencode",
            shlex.quote(f"namespace={namespace}"),
            "--data-urlencode limit=8",
            "--data-urlencode",
            RECALL_QUERY,
        ]
    )


def claude_code_hook(command: str) -> str:
    """Claude Code settings (.claude/settings.json) running `command` when a session starts
    or is cleared or compacted; what it prints is added to the session's context."""
    hook = {"type": "command", "command": command, "timeout": 10}
    entry = {"matcher": "startup|clear|compact", "hooks": [hook]}
    return json.dumps({"hooks": {"SessionStart": [entry]}}, indent=2)


def session_start_snippets(request: HttpRequest, namespace: Namespace) -> list[dict]:
    base = request.build_absolute_uri("/").rstrip("/")
    command = session_start_command(base, namespace.name)
    rule = render_to_string("ui/connect/session-start/cursor-rule.mdc", {"namespace": namespace})
    return [
        {
            "key": "claude-code-session-start",
            "label": "Claude Code: .claude/settings.json",
            "text": claude_code_hook(command),
        },
        {
            "key": "session-start-command",
            "label": "The command alone (any shell or tool)",
            "text": command,
        },
        {"key": "cursor-rule", "label": "Cursor: .cursor/rules/memoryhub.mdc", "text": rule},
    ]


@namespace_view(Action.MANAGE)
def connect_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    form = TokenForm(request.POST or None)
    context = {"namespace": namespace, "form": form, "new_token": None, "snippets": None}
    if request.method == "POST" and form.is_valid():
        token, raw = token_create(
            name=form.cleaned_data["name"],
            namespaces=[namespace],
            read_only=form.cleaned_data["read_only"],
            trusted=form.cleaned_data["trusted"],
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
    context["session_start"] = session_start_snippets(request, namespace)
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
