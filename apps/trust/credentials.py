"""Where credentials are found: detect-secrets' plugins, a few rules of our own, and what passes.

detect-secrets is used in-process, plugin by plugin, over the lines of a text: its regex
plugins give the patterns (the match is the place), its keyword plugin finds `password = ...`
style assignments, its heuristics drop templated values, UUIDs and sequences. Left off: the
high-entropy string plugins (they take commit hashes, content hashes and base64 file names for
keys) and the public-IP plugin (an address is not a credential).

Our own rules cover what the library has no plugin for: Google API keys (AIza...), OpenAI
project and service keys (sk-proj-..., whose newer forms lack the marker the library's OpenAI
plugin needs), GitHub fine-grained tokens (github_pat_...), Anthropic keys (sk-ant-...), npm
tokens outside an .npmrc line, AWS secret keys assigned without quotes (the library's rule
wants quotes), and the end of a PEM private key block (the library finds its first line only;
the whole block is the secret).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from detect_secrets.filters.heuristic import (
    is_indirect_reference,
    is_potential_uuid,
    is_prefixed_with_dollar_sign,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import CONFIG_DENYLIST_REGEX_TO_GROUP, KeywordDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector


@dataclass(frozen=True)
class Found:
    kind: str
    start: int
    end: int
    value: str


# Each pattern with the kind a person reads. The library's plugins first, then our own.
_AWS_ID, _AWS_SECRET = AWSKeyDetector.denylist[0], AWSKeyDetector.denylist[1]
_KINDS: list[tuple[str, re.Pattern]] = [
    ("AWS access key", _AWS_ID),
    ("AWS secret key", _AWS_SECRET),
    *[
        ("Slack webhook" if "hooks" in p.pattern else "Slack token", p)
        for p in SlackDetector.denylist
    ],
    *[
        (kind, pattern)
        for kind, detector in [
            ("Artifactory credential", ArtifactoryDetector),
            ("Azure storage key", AzureStorageKeyDetector),
            ("password in a URL", BasicAuthDetector),
            ("Cloudant credential", CloudantDetector),
            ("Discord bot token", DiscordBotTokenDetector),
            ("GitHub token", GitHubTokenDetector),
            ("GitLab token", GitLabTokenDetector),
            ("IBM Cloud key", IbmCloudIamDetector),
            ("IBM COS key", IbmCosHmacDetector),
            ("JSON web token", JwtTokenDetector),
            ("Mailchimp key", MailchimpDetector),
            ("npm token", NpmDetector),
            ("OpenAI key", OpenAIDetector),
            ("private key", PrivateKeyDetector),
            ("PyPI token", PypiTokenDetector),
            ("SendGrid key", SendGridDetector),
            ("SoftLayer credential", SoftlayerDetector),
            ("Square OAuth secret", SquareOAuthDetector),
            ("Stripe key", StripeDetector),
            ("Telegram bot token", TelegramBotTokenDetector),
            ("Twilio key", TwilioKeyDetector),
        ]
        for pattern in detector.denylist
    ],
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("OpenAI key", re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}")),
    ("Anthropic key", re.compile(r"\bsk-ant-[a-z]+\d*-[A-Za-z0-9_-]{40,}")),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    (
        "AWS secret key",
        re.compile(r"aws_?secret_?(?:access_?)?key\W{0,3}[:=]\W{0,3}([A-Za-z0-9/+]{40})", re.I),
    ),
    ("GitHub token", re.compile(r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b")),
]
_KEYWORD = KeywordDetector()
_KEYWORD_WORDS = ("pass", "pwd", "secret", "key", "token", "contrase", "auth")
_ASSIGNED = re.compile(r"(?:pass|pwd|secret|key|token|contrase|auth)[\w\]'\"`]*\s*(?:[:=]|!=)")
# settings.STRIPE_KEY, DB_PASSWORD, env.secret: a name that points at the secret.
_REFERENCE = re.compile(r"^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Z][A-Z0-9_]*)$")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# Worth handing to the pattern rules: a long token, a URL with a user, a key block. The keyword
# rule runs when a keyword is assigned something (= or :).
_CANDIDATE = re.compile(r"[A-Za-z0-9_\-+/=.]{16,}|://[^\s@/]+:[^\s@/]+@|BEGIN|PuTTY")

# Values a writer uses in place of a secret. AWS's documentation writes its example keys with
# "EXAMPLE" at the end (AKIAIOSFODNN7EXAMPLE); they grant nothing and teams quote them in
# how-to notes, so they pass.
_PLACEHOLDER = re.compile(
    r"example|changeme|change[_ -]me|placeholder|dummy|redacted|your[_-]|here$|\.\.\.|"
    r"^(?:password|passwd|pass|secret|token|pwd|test|user|admin|none|null|xxx+)$",
    re.IGNORECASE,
)


def _is_placeholder(value: str) -> bool:
    core = value.strip("'\"`")
    return (
        len(core) < 6
        or max(map(core.count, set(core))) * 2 > len(core)  # ghp_xxxx..., ****
        or bool(_PLACEHOLDER.search(core))
        or is_templated_secret(core)
        or is_prefixed_with_dollar_sign(core)
        or is_sequential_string(core)
    )


def _looks_made_up(value: str) -> bool:
    """Mixed kinds of characters, as a chosen or generated password has; a word has not."""
    kinds = sum(
        any(test(c) for c in value)
        for test in (str.islower, str.isupper, str.isdigit, lambda c: not c.isalnum())
    )
    return (len(value) >= 8 and kinds >= 2) or kinds >= 3


def _span(match: re.Match) -> tuple[int, int]:
    """Where the secret is in a match: its last group when that is the value (a password in a
    URL, a key after `aws_secret_access_key=`), else all of it."""
    group = match.lastindex
    if group and len(match.group(group) or "") >= 8:
        return match.span(group)
    return match.span()


def _pattern_hits(line: str) -> Iterator[tuple[str, int, int]]:
    for kind, pattern in _KINDS:
        for m in pattern.finditer(line):
            start, end = _span(m)
            joins = _TOKEN_CHARS | {"."} if kind == "JSON web token" else _TOKEN_CHARS
            while end < len(line) and line[end] in _TOKEN_CHARS and line[end - 1] in joins:
                end += 1  # a longer key than the pattern needs is still the key
            while kind == "private key" and start > 0 and line[start - 1] == "-":
                start -= 1
            value = line[start:end]
            if kind == "JSON web token" and not JwtTokenDetector.is_formally_valid(value):
                continue
            if kind == "password in a URL":
                value = value.rsplit(":", 1)[-1].rstrip("@")
            if kind != "private key" and (_is_placeholder(value) or is_potential_uuid(value)):
                continue
            yield kind, start, end


def _keyword_hits(line: str) -> Iterator[tuple[str, int, int]]:
    lowered = line.lower()
    if not any(word in lowered for word in _KEYWORD_WORDS) or is_indirect_reference(line):
        return
    values = _KEYWORD.analyze_string(line, denylist_regex_to_group=CONFIG_DENYLIST_REGEX_TO_GROUP)
    for value in values:
        value = value.strip()
        if " " in value or _is_placeholder(value) or _REFERENCE.match(value):
            continue  # a sentence, a placeholder, a variable: not the password itself
        if not _looks_made_up(value):
            continue
        start = line.find(value)
        if start >= 0:
            yield "password or secret", start, start + len(value)


def find(text: str) -> list[Found]:
    """Each credential in `text`, in order; where two findings overlap the first rule wins."""
    patterns = bool(_CANDIDATE.search(text))
    lowered = text.lower()
    keywords = any(w in lowered for w in _KEYWORD_WORDS) and bool(_ASSIGNED.search(lowered))
    if not patterns and not keywords:
        return []
    found: list[Found] = []
    offset = 0
    for line in text.split("\n"):
        hits = [
            *(_pattern_hits(line) if patterns else ()),
            *(_keyword_hits(line) if keywords else ()),
        ]
        for kind, start, end in hits:
            start, end = start + offset, end + offset
            if kind == "private key":
                block_end = _PEM_END.search(text, end)
                end = block_end.end() if block_end else len(text)
            if not any(f.start < end and start < f.end for f in found):
                found.append(Found(kind, start, end, text[start:end]))
        offset += len(line) + 1
    return sorted(found, key=lambda f: f.start)
