"""Login protection for every authenticate() that comes with a request (admin, UI login).

django-axes counts failed logins per username and address and locks the pair out. Calls with
no request (Django's test client `login()`, a shell) carry no address to count; axes' own
backend refuses them outright, this one lets the next backend decide.
"""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend


class LoginGuardBackend(AxesStandaloneBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
