"""Owner page: the people of a namespace and their roles."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from apps.access.models import NamespaceMembership, Role
from apps.access.services import membership_remove, membership_set
from apps.core.exceptions import ValidationFailed
from apps.memories.models import Namespace

from ..view_permissions import Action, namespace_view


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER)


@namespace_view(Action.MANAGE)
def members_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    form = MemberForm(request.POST or None)
    if request.method == "POST":
        status = _post(request, namespace, form)
        if status is None:
            return redirect("ui:members", namespace=namespace.name)
    memberships = NamespaceMembership.objects.filter(namespace=namespace).select_related("user")
    context = {"namespace": namespace, "form": form, "memberships": memberships, "roles": Role}
    return render(request, "ui/members/page.html", context, status=400 if form.errors else 200)


def _post(request: HttpRequest, namespace: Namespace, form: MemberForm) -> int | None:
    users = get_user_model().objects
    remove = request.POST.get("remove")
    try:
        if remove:
            if not remove.isdigit() or len(remove) > 18:
                form.add_error(None, "remove: not the id of a member of this namespace.")
                return 400
            user = users.filter(pk=int(remove), memberships__namespace=namespace).first()
            if user is not None:
                membership_remove(namespace=namespace, user=user)
                messages.success(request, f"{user.get_username()} removed.")
            return None
        if not form.is_valid():
            return 400
        user = users.filter(username=form.cleaned_data["username"]).first()
        if user is None:
            form.add_error("username", "No user with this name (an administrator creates users).")
            return 400
        membership_set(namespace=namespace, user=user, role=form.cleaned_data["role"])
        messages.success(request, f"{user.get_username()} is now {form.cleaned_data['role']}.")
    except ValidationFailed as exc:
        for field, errors in exc.errors.items():
            form.add_error(field if field in form.fields else None, " ".join(errors))
        return 400
    return None
