"""django-oauth-toolkit's request validator, with what RFC 6749 4.1.2 asks of a code used more
than once: refuse it and revoke the tokens issued on it (the code leaked, or was replayed)."""

from __future__ import annotations

from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

from .services import code_redeemed, code_reused


class MemoryhubOAuth2Validator(OAuth2Validator):
    def _create_refresh_token(self, request, refresh_token_code, access_token, previous):
        refresh_token = super()._create_refresh_token(
            request, refresh_token_code, access_token, previous
        )
        if request.grant_type == "authorization_code":
            request.issued_refresh_token = refresh_token  # remembered with the code, below
        return refresh_token

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        if super().validate_code(client_id, code, client, request, *args, **kwargs):
            return True
        code_reused(application=client, code=code)
        return False

    def invalidate_authorization_code(self, client_id, code, request, *args, **kwargs):
        issued = getattr(request, "issued_refresh_token", None)
        try:
            super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
        except errors.InvalidGrantError:
            # Two exchanges of one code raced and this one lost: both are a reuse.
            code_reused(application=request.client, code=code, also=issued)
            raise
        if issued is not None:
            code_redeemed(application=request.client, code=code, refresh_token=issued)
