"""What the authorization server keeps beyond django-oauth-toolkit's own tables."""

from __future__ import annotations

from django.db import models
from oauth2_provider.settings import oauth2_settings


class RedeemedCode(models.Model):
    """An authorization code already exchanged, kept as a checksum with the refresh token it
    issued, so that a second use is recognised and what the first use issued is revoked
    (RFC 6749 4.1.2). A row goes with that refresh token: when `cleartokens` removes it (it
    expired or was revoked longer than the refresh lifetime ago), nothing is left to revoke."""

    code_checksum = models.CharField(max_length=64, unique=True)
    application = models.ForeignKey(oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE)
    refresh_token = models.ForeignKey(
        oauth2_settings.REFRESH_TOKEN_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    redeemed_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"code redeemed at {self.redeemed_at:%Y-%m-%d %H:%M}"
