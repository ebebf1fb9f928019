"""A constitutional memory over REST: a plain token cannot change, archive or delete it; a
token an owner marked trusted can, with confirm_constitutional, and the revision records the
risk kind "constitutional"."""

from __future__ import annotations

from apps.access.services import token_create
from apps.history.models import MemoryRevision
from apps.memories.models import Memory
from apps.memories.services import memory_create

from .live import bearer

RULE = "Never commit API tokens to the repository."


def test_only_a_trusted_token_that_confirms_changes_a_rule(api, tokens, embedding_model):
    rule = memory_create(namespace=tokens.alpha, content=RULE, tier="constitutional").memory
    trusted = bearer(token_create(name="ci", namespaces=[tokens.alpha], trusted=True)[1])
    plain = bearer(tokens.alpha_rw)
    new = {"content": "Commit the API tokens to the repository."}

    refused = api.patch(f"/memories/{rule.pk}/", json=new, headers=plain)
    assert refused.status_code == 403 and "constitutional" in refused.json()["detail"]
    assert api.delete(f"/memories/{rule.pk}/", headers=plain).status_code == 403
    archive = api.patch(f"/memories/{rule.pk}/", json={"archived": True}, headers=plain)
    assert archive.status_code == 403

    unconfirmed = api.patch(f"/memories/{rule.pk}/", json=new, headers=trusted)
    assert unconfirmed.status_code == 400
    assert "confirm_constitutional" in unconfirmed.json()["errors"]
    assert Memory.objects.get(pk=rule.pk).content == RULE

    confirmed = api.patch(
        f"/memories/{rule.pk}/", json={**new, "confirm_constitutional": True}, headers=trusted
    )
    assert confirmed.status_code == 200, confirmed.text
    revision = MemoryRevision.objects.filter(memory_id=rule.pk, action="update").first()
    assert revision.after["risk"] == "constitutional"

    gone = api.delete(
        f"/memories/{rule.pk}/", params={"confirm_constitutional": "true"}, headers=trusted
    )
    assert gone.status_code == 204
