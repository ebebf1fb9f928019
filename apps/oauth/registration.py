"""Dynamic client registration (RFC 7591) for public clients: an assistant's connector
registers itself with its redirect URIs and gets a client id, no secret (PKCE protects its
codes). Registered applications are django-oauth-toolkit Applications, listed in the admin."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from oauth2_provider.models import Application

from apps.core.exceptions import ValidationFailed
from apps.core.values import text_problem

from .redirects import redirect_uri_problem

MAX_REDIRECT_URIS = 10
MAX_NAME = 255
SUBSTITUTED_AUTH_METHODS = {"none", "client_secret_basic", "client_secret_post"}


class InvalidRedirectUri(ValidationFailed):
    """RFC 7591 names this refusal on its own (invalid_redirect_uri)."""


def _string_list(data: dict, field: str, default: list[str]) -> list[str]:
    value = data.get(field, default)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationFailed({field: "must be an array of strings."})
    for item in value:
        problem = text_problem(item)
        if problem:
            raise ValidationFailed({field: problem})
    return value


def _check_redirect_uri(uri: str) -> None:
    problem = redirect_uri_problem(uri)
    if problem:
        raise InvalidRedirectUri({"redirect_uris": problem})


def client_register(data: Any) -> Application:
    """Create a public authorization-code client from RFC 7591 metadata."""
    if not isinstance(data, dict):
        raise ValidationFailed({"body": "must be a JSON object of client metadata."})
    redirect_uris = _string_list(data, "redirect_uris", [])
    if not redirect_uris:
        raise InvalidRedirectUri({"redirect_uris": "at least one redirect URI is required."})
    if len(redirect_uris) > MAX_REDIRECT_URIS:
        raise InvalidRedirectUri({"redirect_uris": f"at most {MAX_REDIRECT_URIS} are allowed."})
    for uri in redirect_uris:
        _check_redirect_uri(uri)
    # A client asking for a secret gets none: RFC 7591 lets the server substitute its own
    # value, and the answer says "none", so such a client still connects, as a public one.
    method = data.get("token_endpoint_auth_method", "none")
    if not isinstance(method, str) or method not in SUBSTITUTED_AUTH_METHODS:
        raise ValidationFailed(
            {
                "token_endpoint_auth_method": f"'{method}' is not supported: clients are public "
                "('none'), each code proved with PKCE S256."
            }
        )
    grant_types = _string_list(data, "grant_types", ["authorization_code"])
    if "authorization_code" not in grant_types or set(grant_types) - {
        "authorization_code",
        "refresh_token",
    }:
        raise ValidationFailed(
            {"grant_types": "must be authorization_code, optionally with refresh_token."}
        )
    if _string_list(data, "response_types", ["code"]) != ["code"]:
        raise ValidationFailed({"response_types": "only 'code' is supported."})
    name = data.get("client_name", "")
    if not isinstance(name, str) or len(name) > MAX_NAME:
        raise ValidationFailed({"client_name": f"must be a string of at most {MAX_NAME} chars."})
    problem = text_problem(name)
    if problem:
        raise ValidationFailed({"client_name": problem})
    application = Application(
        name=name.strip(),
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=" ".join(redirect_uris),
        client_secret="",
        registration_source=Application.RegistrationSource.DCR,
    )
    try:
        application.full_clean()
    except ValidationError as exc:
        raise InvalidRedirectUri(
            {field: " ".join(msgs) for field, msgs in exc.message_dict.items()}
        ) from exc
    application.save()
    return application


def registration_response(application: Application) -> dict[str, Any]:
    data: dict[str, Any] = {
        "client_id": application.client_id,
        "client_id_issued_at": int(application.created.timestamp()),
        "redirect_uris": application.redirect_uris.split(),
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": "mcp",
    }
    if application.name:
        data["client_name"] = application.name
    return data
