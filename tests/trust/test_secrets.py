"""Credentials are found by kind and place, ordinary ids pass, and what the writer reads (the
refusal, the redacted text) names the kind and the characters, never the value. The values
below are made up: the right shape, random characters."""

from __future__ import annotations

import pytest

from apps.trust.secrets import Secret, find_secrets, redact, refusal

CREDENTIALS = [
    ("AWS access key", "AKIAKIW2XRPWBBDMOTXQ", "aws_access_key_id = {}"),
    ("AWS secret key", "yZWwFvAcwXKHOILzjb2cMum1dthkuby43tMGE+/m", "aws_secret_access_key = {}"),
    ("GitHub token", "ghp_2UVNegofGqlHewA8PAUmzAPd4mUnRXlBsG6D", "Bot token: {} for releases"),
    (
        "GitHub token",
        "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",
        "GH_TOKEN={}",
    ),
    ("GitLab token", "glpat-tCGeSvxYdPLAmwlRTVeP", "deploy token: {}"),
    ("Slack token", "xoxb-92234155103-8085917745965-5VxomPsW6gtDSBJf0RRUX1E9", "SLACK={}"),
    ("Stripe key", "sk_live_ORz84eqgU4c1lLCHh36k0LI7", "Stripe live key: {}."),
    ("OpenAI key", "sk-proj-6Swtg-LuZrSCY-9Wv4cV91Zh_mYQCw8oqA0ePyDl3lGUUx3MT3Blbk", "key {}"),
    ("Anthropic key", "sk-ant-api03-1rV59mA8Wm858UG4Z6IG-uq10MwBoJS_4sqvsH5ifnmyz7leCx0UAu3", "{}"),
    ("Google API key", "AIzaDyHUwUvjhHm3wsSuyqaDRgM81bd_kiZxBLo", "Maps key: {}"),
    ("SendGrid key", "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", "{}"),
    ("npm token", "npm_4lUr9C4h8gvmZ3mZkSSymBEjAikOxOB8CJ0d", "NPM_TOKEN={}"),
    (
        "password in a URL",
        "YgZgNZfhmmCxuSW5",
        "DATABASE_URL=postgres://app:{}@db.internal:5432/app",
    ),
    ("password or secret", "BwZuhiQgVqssMg!", 'password = "{}"'),
    (
        "JSON web token",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMDQyIn0.SCZDLAidgfJLyWQ6UX1Hh11tDtWgvue7I-NisHbvLFl",
        "Bearer {}",
    ),
]


@pytest.mark.parametrize("kind,value,template", CREDENTIALS, ids=[c[0] for c in CREDENTIALS])
def test_a_credential_is_found_by_kind_at_its_characters(kind, value, template):
    text = template.format(value)
    (secret,) = find_secrets(text)
    assert secret.kind == kind
    assert value in text[secret.start : secret.end]


def test_a_private_key_block_is_found_whole():
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow3k9Q\nZx81Lk==\n-----END RSA PRIVATE KEY-----"
    text = f"Deploy key:\n{block}\nthanks"
    (secret,) = find_secrets(text)
    assert (secret.kind, text[secret.start : secret.end]) == ("private key", block)


LOOKALIKES = [
    "Tenant id 3f2b8c1e-6a4d-4f7e-9b21-0c5d7e8f9a10 is the demo tenant.",
    "The regression came in with commit 9fceb02d0ae598e95dc970b74767f19372d61af8.",
    "Revert 9fceb02 before tagging.",
    "sha256: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
    "ghcr.io/acme/api@sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
    "Screenshot saved as Q2hlY2tvdXQtcGFnZS1zY3JlZW5zaG90LTIwMjQ.png",
    "Upgrade to 4.12.3-rc.2+build.20241101 after the freeze.",
    "ISBN 978-0-13-468599-1",
    "Set OPENAI_API_KEY=<YOUR_API_KEY> in .env before running.",
    "Keys look like sk-... and never go in the repo.",
    "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE  # the example from the AWS docs",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "DATABASE_URL=postgres://user:password@localhost:5432/dbname",
    "api_key: ${STRIPE_API_KEY}",
    'password = os.environ["DB_PASSWORD"]',
    "password: see the vault entry for prod-db",
    "On-call phone: +49 30 901820 12, order ORD-2024-11-000482.",
    "src/components/CheckoutPaymentMethodSelectorContainer.tsx",
]


@pytest.mark.parametrize("text", LOOKALIKES, ids=[t[:40] for t in LOOKALIKES])
def test_ids_hashes_and_placeholders_pass(text):
    assert find_secrets(text) == []


def test_refusal_names_the_kind_and_the_characters():
    text = "Here are the temporary credentials: key AKIAKIW2XRPWBBDMOTXQ for the box."
    (secret,) = find_secrets(text)
    assert (secret.start, secret.end) == (40, 60)
    assert refusal(secret) == (
        "content contains a secret (AWS access key) at characters 41-60; "
        "remove it or store where the secret is kept, not the secret"
    )


def test_redact_replaces_each_secret_with_its_kind():
    text = "key AKIAKIW2XRPWBBDMOTXQ and token ghp_2UVNegofGqlHewA8PAUmzAPd4mUnRXlBsG6D."
    assert redact(text, find_secrets(text)) == (
        "key [redacted: AWS access key] and token [redacted: GitHub token]."
    )
    assert redact(text, []) == text
    assert redact("ab", [Secret("x", 0, 1)]) == "[redacted: x]b"
