"""API tokens scoped to namespaces. Only a SHA-256 of the secret is stored."""

from __future__ import annotations

from django.db import models

from apps.memories.models import Namespace


class ApiToken(models.Model):
    name = models.CharField(max_length=100)
    # First characters of the secret, shown in the admin so people can tell tokens apart.
    prefix = models.CharField(max_length=12, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    namespaces = models.ManyToManyField(Namespace, related_name="tokens")
    read_only = models.BooleanField(default=False)
    revoked = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"{self.name} ({self.prefix}…, {mode})"

    def allows(self, namespace, *, write: bool = False) -> bool:
        if self.revoked or (write and self.read_only):
            return False
        ns_id = namespace if isinstance(namespace, int) else namespace.pk
        return self.namespaces.filter(pk=ns_id).exists()
