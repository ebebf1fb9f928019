"""What the page benchmarks share: a logged-in browser session of their own bench user."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.test import Client


def logged_in_client(username: str) -> Client:
    """A test client logged in as `username`, a superuser made on first use."""
    users = get_user_model().objects
    user = users.filter(username=username).first()
    if user is None:
        user = users.create_superuser(username=username, email="", password=None)
    client = Client()
    client.force_login(user)
    return client
