"""Owner page: the namespace's trust policies (which writes wait for review, what happens to a
credential in a write)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from apps.memories.models import Namespace, ReviewPolicy, SecretsPolicy
from apps.memories.services.namespaces import namespace_policies_set

from ..view_permissions import Action, namespace_view


class PolicyForm(forms.Form):
    review = forms.ChoiceField(
        choices=[
            (ReviewPolicy.OFF, "off: every write takes effect (its risk is still recorded)"),
            (ReviewPolicy.FLAGGED, "flagged: writes the risk check flags wait for review"),
            (
                ReviewPolicy.ALL,
                "all: every write through a token or an app waits, but trusted tokens'",
            ),
        ]
    )
    secrets = forms.ChoiceField(
        choices=[
            (SecretsPolicy.REFUSE, "refuse: a write carrying a credential is refused"),
            (SecretsPolicy.REDACT, "redact: stored with the credential replaced"),
        ]
    )


@namespace_view(Action.MANAGE)
def policies_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    initial = {"review": namespace.review, "secrets": namespace.secrets}
    form = PolicyForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        namespace_policies_set(namespace=namespace, **form.cleaned_data)
        messages.success(request, "Policies saved.")
        return redirect("ui:policies", namespace=namespace.name)
    status = 400 if form.errors else 200
    return render(
        request, "ui/policies/page.html", {"namespace": namespace, "form": form}, status=status
    )
