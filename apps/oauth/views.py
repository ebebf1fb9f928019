"""The authorization server's doors: metadata (RFC 8414, RFC 9728), client registration
(RFC 7591), the consent page, and the people's list of connected apps. The token, revocation
and code mechanics are django-oauth-toolkit's views, used as they are (urls.py) behind
oauth_endpoint, which answers what they cannot take with an RFC 6749 error instead of a 500."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import Application
from oauth2_provider.views import AuthorizationView, OAuthProtectedResourceMetadataView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from apps.access import ratelimit
from apps.access.models import OAuthConnection
from apps.core.exceptions import ValidationFailed

from .forms import ConsentForm
from .parameters import parameter_problem
from .registration import InvalidRedirectUri, client_register, registration_response
from .resource import issuer, mcp_resource, public_base, same_resource
from .services import connection_grant, connection_revoke, connections_of


class ProtectedResourceMetadata(OAuthProtectedResourceMetadataView):
    """RFC 9728: the MCP endpoint is the resource, this server its authorization server."""

    def get_resource(self, request):
        return mcp_resource(request)

    def get_authorization_servers(self, request):
        return [issuer(request)]

    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        data = json.loads(response.content)
        data["resource_documentation"] = f"{public_base(request)}/api/docs/"
        data["description"] = (
            "Connect with OAuth (this server is its own authorization server), or send an API "
            "token as 'Authorization: Bearer <token>' (created on the UI's Connect page)."
        )
        response.content = json.dumps(data)
        return response


MAX_REGISTRATION_BYTES = 64 * 1024


def oauth_endpoint(view: Callable, methods: tuple[str, ...] = ("POST",)) -> Callable:
    """A protocol endpoint answered in RFC 6749's error shape whatever comes in: another
    method, or parameters the library or the database cannot take, get a 4xx JSON error
    naming what is wrong before the view runs. No cookie authenticates these endpoints, so
    they are CSRF-exempt (a form post elsewhere would otherwise get Django's HTML 403)."""
    allowed = (*methods, "OPTIONS")

    @csrf_exempt
    @wraps(view)
    def guarded(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method not in allowed:
            response = _oauth_error(
                "invalid_request", f"Use {' or '.join(methods)} here.", status=405
            )
            response["Allow"] = ", ".join(allowed)
            return response
        problem = parameter_problem(request)
        if problem is not None:
            return _oauth_error(problem.error, problem.description)
        return view(request, *args, **kwargs)

    return guarded


def register(request: HttpRequest) -> JsonResponse:
    """RFC 7591 registration of a public client, rate-limited per address."""
    address = request.META.get("REMOTE_ADDR", "")
    verdict = ratelimit.hit("oauth-register", address, settings.OAUTH_REGISTRATION_RATE_LIMIT)
    if not verdict.allowed:
        response = _oauth_error(
            "rate_limited",
            f"Too many client registrations; retry in {verdict.retry_after} s.",
            status=429,
        )
        response["Retry-After"] = str(verdict.retry_after)
        return response
    if len(request.body) > MAX_REGISTRATION_BYTES:
        return _oauth_error(
            "invalid_client_metadata", f"body: at most {MAX_REGISTRATION_BYTES} bytes."
        )
    try:
        data = json.loads(request.body or b"null")
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python parses
        return _oauth_error("invalid_client_metadata", "body: must be JSON client metadata.")
    try:
        application = client_register(data)
    except InvalidRedirectUri as exc:
        return _oauth_error("invalid_redirect_uri", exc.summary())
    except ValidationFailed as exc:
        return _oauth_error("invalid_client_metadata", exc.summary())
    return JsonResponse(registration_response(application), status=201)


def _oauth_error(error: str, description: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status)


class ConsentView(AuthorizationView):
    """The person (logged in through the UI's login) sees which application asks and chooses
    the namespaces it may use and read-only or read-write, then allows or denies."""

    template_name = "oauth/authorize.html"
    form_class = ConsentForm

    def dispatch(self, request, *args, **kwargs):
        problem = parameter_problem(request)
        if problem is not None:
            return _error_page(request, problem.error, problem.description)
        return super().dispatch(request, *args, **kwargs)

    def get(self, request, *args, **kwargs):
        try:
            return super().get(request, *args, **kwargs)
        except _ConsentNotGiven:
            # The library would have issued a code without asking (approval_prompt=auto with
            # a live token, or an application marked skip_authorization): ask instead.
            return self.render_to_response(self.get_context_data(**self.oauth2_data))

    def create_authorization_response(self, request, scopes, credentials, allow):
        """A code comes only from the person's answer on the consent page (a POST): the
        same app with another loopback port, another PKCE challenge or another redirect URI
        is someone else until they allow it."""
        if request.method != "POST":
            raise _ConsentNotGiven
        return super().create_authorization_response(request, scopes, credentials, allow)

    def validate_authorization_request(self, request):
        scopes, credentials = super().validate_authorization_request(request)
        # Refused before the person is asked: plain PKCE (the library would refuse it only
        # after consent) and any resource other than this server's MCP endpoint (RFC 8707).
        if credentials.get("code_challenge_method") != "S256":
            raise _refusal(credentials, "invalid_request", "code_challenge_method must be S256.")
        expected = mcp_resource(request)
        for given in request.GET.getlist("resource"):
            if not same_resource(given, expected):
                raise _refusal(
                    credentials,
                    "invalid_target",
                    f"Tokens are only issued for the resource {expected}.",
                )
        return scopes, credentials

    def get_initial(self):
        initial = super().get_initial()
        initial["resource"] = mcp_resource(self.request)
        return initial

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        kwargs.update(user=self.request.user, resource=mcp_resource(self.request))
        return kwargs

    def form_valid(self, form):
        if not form.cleaned_data.get("allow"):
            return super().form_valid(form)  # the client hears access_denied
        application = Application.objects.filter(client_id=form.cleaned_data["client_id"]).first()
        if application is None:
            return _error_page(self.request, "invalid_request", "client_id: unknown application.")
        # The grant and the code are written together or not at all: if the library refuses
        # the request after all (a tampered hidden field), no connection is left behind.
        with transaction.atomic():
            try:
                connection_grant(
                    application=application,
                    user=self.request.user,
                    namespaces=form.cleaned_data["namespaces"],
                    read_only=form.cleaned_data["access"] != "write",
                )
            except ValidationFailed as exc:  # e.g. a membership ended while the page was open
                for field, messages_ in exc.errors.items():
                    form.add_error(field if field in form.fields else None, messages_)
                return self.form_invalid(form)
            response = super().form_valid(form)
            if "code" not in parse_qs(urlsplit(response.get("Location", "")).query):
                transaction.set_rollback(True)
        return response

    def form_invalid(self, form):
        # The hidden fields carry the client's request: an error there is no choice the person
        # can correct on the page, so the page says what was wrong instead of offering it again.
        broken = [
            f"{name}: {' '.join(errors)}"
            for name, errors in form.errors.items()
            if name in form.fields and form.fields[name].widget.is_hidden and name != "resource"
        ]
        if broken:
            return _error_page(self.request, "invalid_request", " ".join(broken))
        application = Application.objects.filter(client_id=form.data.get("client_id")).first()
        if application is None:
            return _error_page(self.request, "invalid_request", "client_id: unknown application.")
        context = self.get_context_data(form=form, application=application)
        return self.render_to_response(context, status=400)

    def render_to_response(self, context, **kwargs):
        response = super().render_to_response(context, **kwargs)
        # The consent form posts here, then the answer redirects to the client; browsers
        # hold that redirect to the page's form-action, so the client's origin is added.
        application = context.get("application")
        uri = context.get("redirect_uri") or self.request.POST.get("redirect_uri", "")
        if application is not None and uri and application.redirect_uri_allowed(uri):
            parts = urlsplit(uri)
            if parts.scheme not in application.get_allowed_schemes():
                return response  # never sent there (e.g. javascript:), so never allowed
            # An app's own scheme (cursor://...) is named as a scheme source: Chromium matches
            # no host in a URL of a scheme it does not know, so cursor://host would block it.
            web = parts.scheme in ("http", "https")
            source = f"{parts.scheme}://{parts.netloc}" if web else f"{parts.scheme}:"
            response._csp_update = {"form-action": [source]}
        return response


class _ConsentNotGiven(Exception):
    """A code was about to be issued without the consent page."""


def _error_page(request: HttpRequest, error: str, description: str) -> HttpResponse:
    """The consent page's own error: the browser flow cannot go on and nothing is redirected
    (the client's redirect URI is not known to be safe)."""
    context = {"error": {"error": error, "description": description}}
    return render(request, ConsentView.template_name, context, status=400)


def _refusal(credentials: dict, error: str, description: str) -> OAuthToolkitError:
    """An error sent back to the client's (already validated) redirect URI."""
    return OAuthToolkitError(
        error=CustomOAuth2Error(
            error=error, description=description, state=credentials.get("state")
        ),
        redirect_uri=credentials["redirect_uri"],
    )


@login_required
def connections_page(request: HttpRequest) -> HttpResponse:
    return render(request, "oauth/connections.html", {"connections": connections_of(request.user)})


@login_required
@require_POST
def revoke(request: HttpRequest, connection_id: int) -> HttpResponse:
    """A person ends one of their own connections."""
    connection = (
        OAuthConnection.objects.select_related("application")
        .filter(pk=connection_id, user=request.user)
        .first()
    )
    if connection is None:
        raise Http404("No such connected app.")
    name = connection.application.name or connection.application.client_id
    connection_revoke(connection=connection)
    messages.success(request, f"'{name}' disconnected: its tokens no longer work.")
    back = request.POST.get("next", "")
    if back and url_has_allowed_host_and_scheme(back, {request.get_host()}):
        return redirect(back)
    return redirect("oauth:connections")
