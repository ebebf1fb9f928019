"""Small helpers shared by the UI views."""

from __future__ import annotations

import uuid

from django.core.paginator import Page, Paginator
from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme

from apps.core.wording import counted as counted  # the views' shared wording


def writer(request: HttpRequest) -> dict:
    """Who is writing and through which door, for the write services' history records."""
    return {"actor": request.user, "door": "ui"}


def page_of(request: HttpRequest, items, size: int) -> Page:
    """The page of `items` that ?page= asks for: the first when it is not a number, the last
    when it is past the end."""
    return Paginator(items, size).get_page(request.GET.get("page"))


def pick(request: HttpRequest, full: str, partial: str) -> str:
    """The partial template for an htmx request, the whole page otherwise."""
    return partial if getattr(request, "htmx", False) else full


def uuids(values: list[str]) -> list[str]:
    """The values that are memory ids (UUIDs), normalised; anything else is dropped."""
    out = []
    for value in values:
        try:
            out.append(str(uuid.UUID(value)))
        except ValueError:
            continue
    return out


def safe_next(request: HttpRequest, default: str) -> str:
    """The posted `next` when it is a path of this site, else `default`: never a redirect to
    another host ("//evil.example/", "/\\evil.example/", "https://evil.example/")."""
    back = request.POST.get("next") or request.GET.get("next") or ""
    if (
        back.startswith("/")
        and not back.startswith(("//", "/\\"))
        and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()})
    ):
        return back
    return default
