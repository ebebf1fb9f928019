"""What an OAuth request's parameters must be before django-oauth-toolkit, oauthlib or the
database see them. Each check stands for a 500 that hostile input used to cause: a NUL byte
(PostgreSQL refuses it in a lookup), a lone surrogate (it cannot be encoded), a value longer than
its column, a malformed percent escape (oauthlib's decoder raises ValueError), a body Django
cannot parse. RFC 6749 3.1 also says a parameter must not be sent twice (RFC 8707 makes
`resource` the exception)."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest
from django.http.multipartparser import MultiPartParserError
from oauthlib.common import INVALID_HEX_PATTERN

from apps.core.values import text_problem

MAX_LENGTH = 2048
# Shorter where a column or an RFC says so: the Grant's code_challenge and nonce columns, the
# Application's client_id column, RFC 7636's code verifier.
MAX_LENGTHS = {"client_id": 100, "code_challenge": 128, "code_verifier": 128, "nonce": 255}
MAX_PARAMETERS = 100
MAX_NAME_LENGTH = 64
SINGLE_VALUED = {
    "client_id",
    "client_secret",
    "code",
    "code_challenge",
    "code_challenge_method",
    "code_verifier",
    "grant_type",
    "redirect_uri",
    "refresh_token",
    "response_type",
    "scope",
    "state",
    "token",
    "token_type_hint",
    "nonce",
    "prompt",
    "approval_prompt",
}


@dataclass(frozen=True)
class ParameterProblem:
    """An RFC 6749 error for a request refused before it is understood."""

    error: str
    description: str

    def as_dict(self) -> dict[str, str]:
        return {"error": self.error, "description": self.description}


def parameter_problem(request: HttpRequest) -> ParameterProblem | None:
    """Why this request's query or form body cannot be taken as OAuth parameters, or None."""
    if INVALID_HEX_PATTERN.search(request.META.get("QUERY_STRING", "")):
        return ParameterProblem("invalid_request", "The query string has a malformed % escape.")
    sources = [request.GET]
    if request.method == "POST":
        try:
            sources.append(request.POST)
        except (MultiPartParserError, ValueError) as exc:
            return ParameterProblem("invalid_request", f"The body cannot be read: {exc}")
    for params in sources:
        if len(params) > MAX_PARAMETERS:
            return ParameterProblem("invalid_request", f"At most {MAX_PARAMETERS} parameters.")
        for name, values in params.lists():
            problem = _value_problem(name, values)
            if problem:
                return ParameterProblem("invalid_request", problem)
    return None


def _value_problem(name: str, values: list[str]) -> str | None:
    if text_problem(name) or len(name) > MAX_NAME_LENGTH:
        return "A parameter name is not valid text or is too long."
    if name in SINGLE_VALUED and len(values) > 1:
        return f"{name}: given more than once."
    limit = MAX_LENGTHS.get(name, MAX_LENGTH)
    for value in values:
        problem = text_problem(value)
        if problem:
            return f"{name}: {problem}"
        if len(value) > limit:
            return f"{name}: at most {limit} characters."
    return None
