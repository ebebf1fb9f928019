"""Production settings: only overrides of base, every secure setting read from the environment.

Use with DJANGO_SETTINGS_MODULE=memoryhub.settings.production behind TLS. `.env.example` lists
each variable; `manage.py check --deploy` passes with them filled in (tests/core).
"""

import re

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import PATH_PREFIX, env

DEBUG = False
SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
if len(SECRET_KEY) < 50:
    raise ImproperlyConfigured("Set DJANGO_SECRET_KEY to a random string of 50+ characters.")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")

SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=True)
SESSION_COOKIE_SECURE = env.bool("DJANGO_SESSION_COOKIE_SECURE", default=True)
CSRF_COOKIE_SECURE = env.bool("DJANGO_CSRF_COOKIE_SECURE", default=True)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto: DJANGO_SECURE_PROXY_SSL_HEADER=true.
if env.bool("DJANGO_SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The health check is polled over plain HTTP by load balancers and must not be redirected.
_healthz = re.escape(PATH_PREFIX.lstrip("/") + "/") if PATH_PREFIX else ""  # its path prefix
SECURE_REDIRECT_EXEMPT = [rf"^{_healthz}healthz$"]
# The evaluation and benchmark commands (lab/) are tooling: a production server runs without them.
INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "lab"]  # noqa: F405
