"""Who may reach a namespace: API tokens scoped to namespaces (only a SHA-256 of the secret is
stored) and people's roles in namespaces. The rules themselves are in permissions.py."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.memories.models import Namespace


class ApiToken(models.Model):
    name = models.CharField(max_length=100)
    # First characters of the secret, shown in the admin so people can tell tokens apart.
    prefix = models.CharField(max_length=12, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    namespaces = models.ManyToManyField(Namespace, related_name="tokens")
    read_only = models.BooleanField(default=False)
    # Marked by an owner (an importer in CI, say): its writes do not wait under review "all",
    # and it may approve or reject what others wrote.
    trusted = models.BooleanField(default=False, db_default=False)
    revoked = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"{self.name} ({self.prefix}…, {mode})"

    @property
    def held_for_review(self) -> bool:
        """Whether a namespace with review "all" holds this credential's writes."""
        return not self.trusted


class Role(models.TextChoices):
    """A person's role in one namespace; each role includes the ones before it."""

    VIEWER = "viewer"
    EDITOR = "editor"
    OWNER = "owner"


class NamespaceMembership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["namespace", "user"]
        constraints = [
            models.UniqueConstraint(fields=["user", "namespace"], name="membership_user_namespace"),
            models.CheckConstraint(
                condition=models.Q(role__in=Role.values), name="membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.namespace} ({self.role})"


class OAuthConnection(models.Model):
    """What a person let one OAuth application (an assistant's connector) do: which namespaces,
    read-only or read-write. Its tokens reach those namespaces only as far as the person's own
    role there allows at the time of each request (permissions.py), so a later change of role
    or membership narrows it at once."""

    application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        on_delete=models.CASCADE,
        related_name="connections",
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oauth_connections"
    )
    namespaces = models.ManyToManyField(Namespace, related_name="oauth_connections")
    read_only = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["application", "user"], name="oauth_connection_application_user"
            )
        ]

    def __str__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"{self.application.name or self.application.client_id} for {self.user} ({mode})"

    @property
    def held_for_review(self) -> bool:
        """A connected app's writes wait under review "all" (see ApiToken.held_for_review)."""
        return True


class RateCounter(models.Model):
    """One window's count of one rate limit (apps/access/ratelimit.py) when no shared cache is
    configured, in the database so that every web process counts against the same number; rows
    of past windows are deleted by the scheduled cleanup (apps/access/cleanup.py)."""

    key = models.CharField(max_length=200, primary_key=True)
    count = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key}: {self.count}"
