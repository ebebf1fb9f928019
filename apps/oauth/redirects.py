"""Which redirect URIs a client may use (RFC 8252, OAuth for native apps): https; http on a
loopback address; and a native app's own private-use URI scheme (section 7.1), which is how
IDE assistants such as Cursor (`cursor://...`) or VS Code (`vscode://...`) get their code back.

A private-use scheme is accepted when it is a reverse domain name (`com.example.app:/callback`,
the form section 7.1 asks apps to use) or one of settings.OAUTH_APP_SCHEMES (the IDEs' short
schemes). Schemes that a browser or the system gives a meaning of its own (`javascript:`,
`data:`, `file:`...) are never a callback, whatever the settings say."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from django.conf import settings

LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}
WEB_SCHEMES = ("http", "https")
# Never a client's callback: they run code, read local files or leave the browser for
# something else than the app that registered.
RESERVED_SCHEMES = frozenset(
    {
        "about",
        "blob",
        "chrome",
        "data",
        "file",
        "filesystem",
        "ftp",
        "intent",
        "javascript",
        "jar",
        "mailto",
        "sms",
        "tel",
        "view-source",
        "vbscript",
        "ws",
        "wss",
    }
)
# RFC 3986 scheme syntax restricted to a domain name's characters, at least two labels.
_REVERSE_DOMAIN = re.compile(r"[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+")


def is_app_scheme(scheme: str) -> bool:
    """A native app's private-use scheme (RFC 8252 7.1) this server redirects to."""
    scheme = scheme.lower()
    if scheme in RESERVED_SCHEMES or scheme in WEB_SCHEMES:
        return False
    named = {s.lower() for s in settings.OAUTH_APP_SCHEMES}
    return scheme in named or _REVERSE_DOMAIN.fullmatch(scheme) is not None


def redirect_uri_problem(uri: str) -> str | None:
    """Why a client may not register this redirect URI, or None. The syntax of what passes is
    checked again by django-oauth-toolkit's model validation."""
    try:
        parts = urlsplit(uri)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return f"'{uri}' is not a URI."
    if parts.fragment or "#" in uri:
        return f"'{uri}' must not have a fragment."
    if "@" in parts.netloc:  # it could never match a request (the toolkit refuses userinfo)
        return f"'{uri}' must not carry a user name or password."
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return None
    if is_app_scheme(parts.scheme):
        return None
    return (
        f"'{uri}' is not allowed: use https, http on localhost, 127.0.0.1 or [::1] (any port), "
        "or an app's own scheme (a reverse domain name such as com.example.app:/callback, or "
        f"{', '.join(f'{s}://' for s in settings.OAUTH_APP_SCHEMES)})."
    )


def allowed_schemes_of(redirect_uris: str) -> list[str]:
    """The schemes an application's redirects may use: the web's, and the app schemes among
    its own registered redirect URIs (so one client's scheme opens nothing for another)."""
    schemes = list(WEB_SCHEMES)
    for uri in redirect_uris.split():
        scheme = uri.partition(":")[0].lower()
        if is_app_scheme(scheme) and scheme not in schemes:
            schemes.append(scheme)
    return schemes
