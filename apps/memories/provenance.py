"""Where a memory came from: the door, the person, the credential, the MCP client, the file an
import read and the page its writer names.

The write path works it out once per write from what every door already hands over (the actor
and the door) plus an `Origin` for what only the door knows (the MCP client's clientInfo, the
import's file); it is stored on the row and never changed by an edit. A record restored from an
export brings its own provenance, which is kept; the import that brought it is added as
`imported`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from apps.core.exceptions import ValidationFailed

# The doors a provenance names: the history's doors, and `import` for a write that restores
# records from a file (the history keeps the door the file came through).
DOORS = ("ui", "rest", "mcp", "import", "admin", "cli", "job", "system")
CREDENTIAL_KINDS = ("token", "app")
# The credentials the actor may be, by model label (the access app sits above this one).
TOKEN, CONNECTION = "access.ApiToken", "access.OAuthConnection"
TEXT_MAX = 200
PERSON_MAX = 150  # a username, as Django's user model bounds it
URL_MAX = 2000


@dataclass(frozen=True)
class Origin:
    """What a door knows about a write beyond its actor: the MCP client's own name and version
    (from its `initialize`), or the file an import reads and its format."""

    client: str = ""
    import_file: str = ""
    import_format: str = ""

    def to_dict(self) -> dict[str, str]:
        return {k: v for k, v in asdict(self).items() if v}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Origin:
        data = data or {}
        names = ("client", "import_file", "import_format")
        return cls(**{k: str(data.get(k) or "") for k in names})


def client_label(name: str | None, version: str | None) -> str:
    """ "x-client 1.2": an MCP client's clientInfo as one label, printable characters only (a
    client names itself: no control, hidden or NUL character reaches a column or a page)."""
    words = (name or "", version or "")
    text = " ".join("".join(c for c in p if c.isprintable()).strip() for p in words)
    return " ".join(text.split())[:TEXT_MAX]


def who(actor: Any) -> tuple[str, dict | None]:
    """(person's username or "", credential {kind, name, client_id?} or None) of an actor: a
    user, an ApiToken, an OAuthConnection or None (the system)."""
    if actor is None or getattr(actor, "pk", None) is None:
        return "", None
    label = actor._meta.label
    if label == TOKEN:
        return "", {"kind": "token", "name": actor.name}
    if label == CONNECTION:
        app = actor.application
        name = app.name or app.client_id
        return actor.user.get_username(), {"kind": "app", "name": name, "client_id": app.client_id}
    return actor.get_username(), None


def columns(
    *, actor: Any, door: str, origin: Origin | None, source_url: str, given: dict | None, now
) -> dict[str, Any]:
    """The Memory columns of one new row's provenance. `given` is what an exported record
    brings (kept as it was, the import added as `imported`); otherwise the write itself is
    described. A write with an import file is an `import`, whatever door the file came through."""
    origin = origin or Origin()
    if given:
        extra = {k: v for k, v in given.items() if k not in _COLUMN_KEYS}
        if origin.import_file or origin.import_format:
            if extra.get("imported"):  # imported before: the earlier hops are kept too
                extra["earlier_imports"] = [*extra.get("earlier_imports", []), extra["imported"]]
            extra["imported"] = {
                "file": origin.import_file,
                "format": origin.import_format,
                "at": now.isoformat(),
                "door": door,
            }
        credential = given.get("credential") or {}
        return {
            "origin_door": given.get("door") or "",
            "origin_person": given.get("person") or "",
            "origin_credential": credential.get("name") or "",
            "origin_client": given.get("client") or "",
            "provenance": {**extra, "credential": credential or None},
        }
    person, credential = who(actor)
    extra: dict[str, Any] = {"credential": credential, "written_at": now.isoformat()}
    if source_url:
        extra["source_url"] = source_url
    written_by_import = bool(origin.import_file or origin.import_format)
    if written_by_import:
        extra["import"] = {"file": origin.import_file, "format": origin.import_format}
    return {
        "origin_door": "import" if written_by_import else door,
        "origin_person": person,
        "origin_credential": credential["name"] if credential else "",
        "origin_client": origin.client,
        "provenance": extra,
    }


_COLUMN_KEYS = ("door", "person", "client")


def provenance_dict(
    *,
    door: str,
    person: str,
    credential: str,
    client: str,
    extra: Mapping[str, Any] | None,
) -> dict[str, Any] | None:
    """The `provenance` object every result shows, from a row's columns (None on a row written
    before provenance was recorded)."""
    extra = extra if isinstance(extra, Mapping) else {}
    if not door:
        return None
    given = extra.get("credential")
    out = {
        "door": door,
        "person": person or None,
        "credential": _credential(given) if isinstance(given, Mapping) and credential else None,
        "client": client or None,
        "source_url": extra.get("source_url") or None,
        "import": _texts(extra.get("import"), ("file", "format")),
        "imported": _texts(extra.get("imported"), ("file", "format", "at", "door")),
        "written_at": extra.get("written_at") or None,
    }
    earlier = extra.get("earlier_imports")
    if isinstance(earlier, list) and earlier:
        found = [_texts(e, ("file", "format", "at", "door")) for e in earlier]
        out["earlier_imports"] = [e for e in found if e is not None]
    return out


def _credential(given: Mapping) -> dict[str, str]:
    found = {"kind": str(given.get("kind", "")), "name": str(given.get("name", ""))}
    if given.get("client_id"):
        found["client_id"] = str(given["client_id"])
    return found


def _texts(given: Any, keys: tuple[str, ...]) -> dict[str, str] | None:
    """A small object of text fields as stored (an imported file may hold anything else)."""
    if not isinstance(given, Mapping):
        return None
    return {k: str(given.get(k) or "") for k in keys}


def of_memory(memory) -> dict[str, Any] | None:
    return provenance_dict(
        door=memory.origin_door,
        person=memory.origin_person,
        credential=memory.origin_credential,
        client=memory.origin_client,
        extra=memory.provenance,
    )


def sentence(prov: Mapping[str, Any] | None) -> str:
    """ "written by ana with the app Claude (client claude-code 2.1) via MCP on 2026-11-20":
    one line for a page, a result card or an assistant."""
    if not prov:
        return "provenance not recorded"  # written before it was kept
    parts = ["written"]
    credential = prov.get("credential") or {}
    if prov.get("person"):
        parts.append(f"by {prov['person']}")
    if credential.get("kind") == "app":
        parts.append(f"{'with' if prov.get('person') else 'by'} the app {credential['name']}")
    elif credential.get("kind") == "token":
        parts.append(f"{'with' if prov.get('person') else 'by'} the token {credential['name']}")
    if prov.get("client"):
        parts.append(f"(client {prov['client']})")
    parts.append(f"via {_DOOR_NAMES.get(prov['door'], prov['door'])}")
    if prov.get("import"):
        found = prov["import"]
        parts.append(f"from {found.get('file') or 'a file'} ({found.get('format') or '?'})")
    day = _day(prov.get("written_at"))
    if day:
        parts.append(f"on {day}")
    imported = prov.get("imported")
    if imported:
        where = imported.get("file") or "a file"
        parts.append(f"; imported from {where} on {_day(imported.get('at'))}")
    return " ".join(parts).replace(" ;", ";")


_DOOR_NAMES = {"ui": "the web UI", "rest": "REST", "mcp": "MCP", "admin": "the admin"}


def _day(moment: Any) -> str:
    if isinstance(moment, datetime):
        return moment.date().isoformat()
    return str(moment or "")[:10]


def check_given(value: Any, *, field: str = "provenance") -> dict | None:
    """An exported record's `provenance`, checked: an object with a known door, text fields
    within bounds and a credential of a known kind. Raises ValidationFailed naming the field."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValidationFailed({field: "Must be an object (as an export writes it) or null."})
    errors: dict[str, str] = {}
    if value.get("door") not in DOORS:
        errors[f"{field}.door"] = f"Must be one of: {', '.join(DOORS)}."
    for key, limit in (("person", PERSON_MAX), ("client", TEXT_MAX), ("written_at", TEXT_MAX)):
        if value.get(key) is not None and (
            not isinstance(value[key], str) or len(value[key]) > limit
        ):
            errors[f"{field}.{key}"] = f"Must be text of at most {limit} characters."
    url = value.get("source_url")
    if url is not None and (not isinstance(url, str) or len(url) > URL_MAX):
        errors[f"{field}.source_url"] = f"Must be text of at most {URL_MAX} characters."
    elif url is not None and check_source_url(url):
        errors[f"{field}.source_url"] = check_source_url(url)
    credential = value.get("credential")
    if credential is not None and not (
        isinstance(credential, Mapping)
        and credential.get("kind") in CREDENTIAL_KINDS
        and isinstance(credential.get("name"), str)
        and len(credential["name"]) <= TEXT_MAX
    ):
        errors[f"{field}.credential"] = "Must be null or {kind: token|app, name, client_id?}."
    if value.get("earlier_imports") is not None and not isinstance(value["earlier_imports"], list):
        errors[f"{field}.earlier_imports"] = "Must be a list or null."
    for key in ("import", "imported"):
        if value.get(key) is not None and not isinstance(value[key], Mapping):
            errors[f"{field}.{key}"] = "Must be an object or null."
    if errors:
        raise ValidationFailed(errors)
    return {k: v for k, v in value.items() if v is not None}


def check_source_url(value: str) -> str | None:
    """Why `value` is not a source_url a memory may name, or None."""
    if value and not value.lower().startswith(("http://", "https://")):
        return "Must be an http:// or https:// address."
    return None
