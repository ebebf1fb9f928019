"""scan_secrets reports the stored memories that hold a credential, by id, kind and place,
and never prints the credential itself."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.memories.models import Memory
from tests.factories import bare_memories, namespace

KEY = "ghp_2UVNegofGqlHewA8PAUmzAPd4mUnRXlBsG6D"


def _scan(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("scan_secrets", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_scan_reports_kind_and_place_never_the_secret():
    team = namespace("team")
    bare_memories(team, 3)
    Memory.objects.filter(pk=Memory.objects.filter(namespace=team).first().pk).update(
        content=f"CI token {KEY} for releases"
    )
    holder = Memory.objects.get(content__contains="ghp_")
    bare_memories(namespace("other"), 1)
    Memory.objects.filter(namespace__name="other").update(content=f"mine: {KEY}")

    out, err = _scan("--namespace", "team", "--every", "1")

    assert f"memory {holder.pk} in team: GitHub token at characters 10-49" in out
    assert "1 of 3 memories hold a secret" in out
    assert KEY not in out + err
    assert "other" not in out
    assert "scanned 3/3 memories" in err
    out, _ = _scan()
    assert "2 of 4 memories hold a secret" in out


@pytest.mark.django_db
def test_scan_of_an_unknown_namespace_is_refused():
    with pytest.raises(CommandError, match="No namespace named 'nope'"):
        _scan("--namespace", "nope")
