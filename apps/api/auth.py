"""Bearer-token authentication for the REST API. `request.auth` is the ApiToken."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.permissions import BasePermission
from rest_framework.throttling import BaseThrottle

from apps.access import ratelimit
from apps.access.models import ApiToken
from apps.access.services import token_authenticate


class TokenPrincipal:
    """Stands in for request.user: the API acts for a token, not a Django user."""

    is_authenticated = True
    is_anonymous = False
    is_staff = False

    def __init__(self, token: ApiToken):
        self.token = token

    def __str__(self) -> str:
        return f"token:{self.token.prefix}"


class ApiTokenAuthentication(BaseAuthentication):
    keywords = (b"bearer", b"token")

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in self.keywords:
            return None
        try:
            return self._authenticate(parts)
        except AuthenticationFailed:
            # Counted and refused only when the check failed: a valid token always gets in.
            verdict = ratelimit.failed_auth(request.META.get("REMOTE_ADDR", ""))
            if not verdict.allowed:
                raise Throttled(
                    verdict.retry_after, "Too many failed token checks from this address."
                ) from None
            raise

    def _authenticate(self, parts):
        if len(parts) != 2:
            raise AuthenticationFailed("Malformed Authorization header: use 'Bearer <token>'.")
        try:
            raw = parts[1].decode()
        except UnicodeDecodeError:
            raise AuthenticationFailed("Invalid API token.") from None
        token = token_authenticate(raw)
        if token is None:
            raise AuthenticationFailed("Invalid or revoked API token.")
        return TokenPrincipal(token), token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="memoryhub"'


class TokenRateThrottle(BaseThrottle):
    """At most API_RATE_LIMIT requests per token (REST and MCP count together); 429 with
    Retry-After beyond it."""

    def allow_request(self, request, view) -> bool:
        if not isinstance(request.auth, ApiToken):
            return True
        self.verdict = ratelimit.token_request(request.auth.pk)
        return self.verdict.allowed

    def wait(self) -> float | None:
        return self.verdict.retry_after


class HasApiToken(BasePermission):
    message = "An API token is required: send 'Authorization: Bearer <token>'."

    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, ApiToken)


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = ApiTokenAuthentication
    name = "ApiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A token from `python manage.py create_token --namespace NAME`.",
        }
