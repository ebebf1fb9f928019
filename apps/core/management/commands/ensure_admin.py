from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create an admin login if none exists and print its password once."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="Where it is served")

    def handle(self, *args, username, url, **options):
        users = get_user_model().objects
        if users.filter(is_superuser=True).exists():
            self.stdout.write("Admin login exists (reset it with: manage.py changepassword admin).")
            return
        password = secrets.token_urlsafe(12)
        users.create_superuser(username=username, email="", password=password)
        self.stdout.write(
            self.style.SUCCESS(
                "\n  Admin login created (shown only this once):\n"
                f"    user:     {username}\n    password: {password}\n"
                f"    at:       {url.rstrip('/')}/ (web UI) and {url.rstrip('/')}/admin/\n"
            )
        )
