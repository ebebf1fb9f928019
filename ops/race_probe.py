"""Racing writers against a live server: are acknowledged changes ever lost, or deleted
memories brought back? Prints one line of counts per kind of race and door.

    .venv/bin/uvicorn memoryhub.asgi:application --port 8105 --workers 2 --no-proxy-headers &
    .venv/bin/python ops/race_probe.py --url http://127.0.0.1:8105 --trials 200

It sets itself up through the ORM (same settings and database as the server): a namespace
"race-probe", a token and a user for the web UI. Each trial makes a fresh memory, then starts
two writes at the same moment (a barrier) through REST, MCP or the UI, and checks the result
against what the clients were told:

- patch/patch: two changes of different fields, both acknowledged -> both must be stored.
- patch/delete: a delete acknowledged -> the memory must be gone (never written back).
- restore/patch: a version restore and a change of another field -> the result must be the
  two applied one after the other, in the order the history records them.
- stale: a client that read version N sends its change after someone else's -> refused (409,
  412 or a tool error), never applied over the newer version.

Give the server a high API_RATE_LIMIT for this run: it sends thousands of requests.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "race-probe-password-1"
NAMESPACE = "race-probe"


def setup() -> str:
    """Namespace, UI user (owner) and a token; returns the raw token."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from apps.access.models import NamespaceMembership, Role
    from apps.access.services import token_create
    from apps.memories.services import namespace_get_or_create

    namespace = namespace_get_or_create(name=NAMESPACE)
    users = get_user_model().objects
    user = users.filter(username="race-probe").first() or users.create_user("race-probe")
    user.set_password(PASSWORD)
    user.save()
    NamespaceMembership.objects.get_or_create(
        user=user, namespace=namespace, defaults={"role": Role.OWNER}
    )
    return token_create(name="race-probe", namespaces=[namespace])[1]


class Rest:
    def __init__(self, base: str, token: str):
        self.http = httpx.Client(
            base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=120
        )

    def create(self, text: str) -> str:
        response = self.http.post("/memories/", json={"content": text, "namespace": NAMESPACE})
        response.raise_for_status()
        return response.json()["memory"]["id"]

    def get(self, pk: str) -> httpx.Response:
        return self.http.get(f"/memories/{pk}/")

    def patch(self, pk: str, fields: dict, version: int | None = None) -> httpx.Response:
        headers = {"If-Match": f'"{version}"'} if version else {}
        return self.http.patch(f"/memories/{pk}/", json=fields, headers=headers)

    def delete(self, pk: str) -> httpx.Response:
        return self.http.delete(f"/memories/{pk}/")

    def revisions(self, pk: str) -> list[dict]:
        return self.http.get(f"/memories/{pk}/revisions/", params={"limit": 100}).json()["results"]

    def restore(self, pk: str, revision: int) -> httpx.Response:
        return self.http.post(f"/memories/{pk}/revisions/{revision}/restore/")


class Mcp:
    def __init__(self, base: str, token: str):
        self.http = httpx.Client(
            base_url=base,
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
            },
            timeout=120,
        )

    def update(self, pk: str, **arguments) -> tuple[int, bool]:
        """(HTTP status, whether the tool answered an error)."""
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "update_memory", "arguments": {"memory_id": pk, **arguments}},
        }
        response = self.http.post("/mcp", json=body)
        if response.status_code != 200:
            return response.status_code, True
        result = response.json().get("result") or {}
        return 200, bool(result.get("isError")) or "error" in response.json()


class Ui:
    CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
    VERSION = re.compile(r'name="version" value="(\d+)"')

    def __init__(self, base: str):
        self.http = httpx.Client(base_url=base, timeout=120, headers={"Referer": base + "/"})
        page = self.http.get("/login/")
        self.http.post(
            "/login/",
            data={
                "csrfmiddlewaretoken": self.CSRF.search(page.text).group(1),
                "username": "race-probe",
                "password": PASSWORD,
            },
        )
        assert "sessionid" in self.http.cookies, "UI login failed"

    def _csrf(self) -> str:
        return self.http.cookies["csrftoken"]

    def edit_form(self, pk: str) -> dict:
        """The edit form's fields as the page filled them (version included)."""
        page = self.http.get(f"/memories/{pk}/edit/").text
        fields = {"csrfmiddlewaretoken": self.CSRF.search(page).group(1)}
        for name in ("title", "file_path", "source", "tags", "importance"):
            match = re.search(rf'name="{name}"[^>]*?value="([^"]*)"', page)
            fields[name] = match.group(1) if match else ""
        content = re.search(r'<textarea name="content"[^>]*>(.*?)</textarea>', page, re.S)
        fields["content"] = _unescape(content.group(1)) if content else ""
        for name in ("category", "tier"):
            select = re.search(rf'<select name="{name}".*?</select>', page, re.S).group(0)
            fields[name] = re.search(r'<option value="([^"]+)"[^>]*selected', select).group(1)
        fields["version"] = self.VERSION.search(page).group(1)
        return fields

    def post_edit(self, pk: str, fields: dict) -> int:
        return self.http.post(f"/memories/{pk}/edit/", data=fields).status_code

    def delete(self, pk: str) -> int:
        data = {"csrfmiddlewaretoken": self._csrf()}
        return self.http.post(f"/memories/{pk}/delete/", data=data).status_code

    def restore(self, pk: str, revision: int) -> int:
        data = {"csrfmiddlewaretoken": self._csrf()}
        return self.http.post(
            f"/memories/{pk}/revisions/{revision}/restore/", data=data
        ).status_code


def _unescape(text: str) -> str:
    import html

    return html.unescape(text)


def race(*calls):
    """Run the calls at the same moment; their results in order."""
    barrier = threading.Barrier(len(calls))

    def go(call):
        barrier.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return [f.result() for f in [pool.submit(go, c) for c in calls]]


def status_of(result) -> int:
    if isinstance(result, httpx.Response):
        return result.status_code
    if isinstance(result, tuple):
        return result[0]
    return result


class Probe:
    def __init__(self, base: str, token: str):
        self.rest, self.mcp, self.ui = Rest(base, token), Mcp(base, token), Ui(base)
        self.counts: dict[tuple[str, str], Counter] = {}

    def tally(self, kind: str, door: str, outcome: str, *results) -> None:
        counter = self.counts.setdefault((kind, door), Counter())
        counter["trials"] += 1
        counter[outcome] += 1
        counter["5xx"] += sum(1 for r in results if status_of(r) >= 500)

    def fresh(self) -> str:
        return self.rest.create(f"Race probe memory {uuid.uuid4()}: the nightly job runs at 2.")

    # --- patch / patch of different fields ------------------------------------------------
    def patch_patch(self, door: str) -> None:
        pk = self.fresh()
        title = f"title {uuid.uuid4().hex[:8]}"
        if door == "rest":
            mine = lambda: self.rest.patch(pk, {"title": title})  # noqa: E731
        elif door == "mcp":
            mine = lambda: self.mcp.update(pk, title=title)  # noqa: E731
        else:
            form = {**self.ui.edit_form(pk), "title": title}
            mine = lambda: self.ui.post_edit(pk, form)  # noqa: E731
        a, b = race(mine, lambda: self.rest.patch(pk, {"tier": "core"}))
        stored = self.rest.get(pk).json()
        a_ok = status_of(a) in (200, 302) and not (isinstance(a, tuple) and a[1])
        told = status_of(a) == 409
        lost = (a_ok and stored["title"] != title) or (
            status_of(b) == 200 and stored["tier"] != "core"
        )
        self.tally("patch/patch", door, "lost" if lost else "told" if told else "kept", a, b)

    # --- patch / delete ---------------------------------------------------------------------
    def patch_delete(self, door: str) -> None:
        pk = self.fresh()
        if door == "rest":
            mine = lambda: self.rest.patch(pk, {"title": "late edit"})  # noqa: E731
            gone = lambda: self.rest.delete(pk)  # noqa: E731
        elif door == "mcp":
            mine = lambda: self.mcp.update(pk, title="late edit")  # noqa: E731
            gone = lambda: self.rest.delete(pk)  # noqa: E731
        else:
            form = {**self.ui.edit_form(pk), "title": "late edit"}
            mine = lambda: self.ui.post_edit(pk, form)  # noqa: E731
            gone = lambda: self.ui.delete(pk)  # noqa: E731
        a, b = race(mine, gone)
        deleted = status_of(b) in (204, 302)
        exists = self.rest.get(pk).status_code == 200
        outcome = "resurrected" if deleted and exists else "kept"
        self.tally("patch/delete", door, outcome, a, b)

    # --- restore / patch ----------------------------------------------------------------------
    def restore_patch(self, door: str) -> None:
        pk = self.fresh()
        self.rest.patch(pk, {"title": "first"})
        first = self.rest.revisions(pk)[0]["id"]
        self.rest.patch(pk, {"title": "second"})
        if door == "ui":
            restore = lambda: self.ui.restore(pk, first)  # noqa: E731
        else:
            restore = lambda: self.rest.restore(pk, first)  # noqa: E731
        if door == "mcp":
            change = lambda: self.mcp.update(pk, importance=0.8)  # noqa: E731
        else:
            change = lambda: self.rest.patch(pk, {"importance": 0.8})  # noqa: E731
        a, b = race(restore, change)
        stored = self.rest.get(pk).json()
        revisions = self.rest.revisions(pk)  # newest first
        restore_rev = next((r["id"] for r in revisions if r["action"] == "restore"), None)
        change_rev = next(
            (
                r["id"]
                for r in revisions
                if "importance" in (r["after"] or {}) and r["action"] != "restore"
            ),
            None,
        )
        expected = 0.8 if (change_rev or 0) > (restore_rev or 0) else 0.5
        lost = stored["title"] != "first" or stored["importance"] != expected
        self.tally("restore/patch", door, "lost" if lost else "kept", a, b)

    # --- a stale client ---------------------------------------------------------------------
    def stale(self, door: str) -> None:
        pk = self.fresh()
        version = self.rest.get(pk).json()["version"]
        form = self.ui.edit_form(pk) if door == "ui" else None
        newer = self.rest.patch(pk, {"importance": 0.9})  # someone else, meanwhile
        if door == "rest":
            answer = self.rest.patch(pk, {"importance": 0.1}, version=version)
            told = answer.status_code == 412
        elif door == "mcp":
            answer = self.mcp.update(pk, importance=0.1, expected_version=version)
            told = answer[1]
        else:
            answer = self.ui.post_edit(pk, {**form, "title": "from a stale form"})
            told = answer == 409
        stored = self.rest.get(pk).json()
        lost = stored["importance"] != 0.9 or (not told and door != "ui")
        self.tally("stale", door, "lost" if lost else "told" if told else "kept", newer, answer)

    def report(self) -> int:
        bad = 0
        for (kind, door), c in sorted(self.counts.items()):
            bad += c["lost"] + c["resurrected"] + c["5xx"]
            print(
                f"{kind:14} {door:5} trials={c['trials']:4} lost={c['lost']} "
                f"resurrected={c['resurrected']} told={c['told']} kept={c['kept']} 5xx={c['5xx']}"
            )
        return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--kinds", default="patch_patch,patch_delete,restore_patch,stale")
    parser.add_argument("--doors", default="rest,mcp,ui")
    args = parser.parse_args()
    probe = Probe(args.url, setup())
    for kind in args.kinds.split(","):
        for door in args.doors.split(","):
            for _ in range(args.trials):
                getattr(probe, kind)(door)
            print(f"... {kind} {door} done", file=sys.stderr, flush=True)
    bad = probe.report()
    print(f"total lost + resurrected + 5xx: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
