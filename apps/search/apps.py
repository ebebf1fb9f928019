from __future__ import annotations

from typing import TYPE_CHECKING

from django.apps import AppConfig

if TYPE_CHECKING:
    from .models import StrategyWeights


class SearchConfig(AppConfig):
    name = "apps.search"
    label = "search"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from . import jobs  # here: the job registry needs the models, loaded once apps are ready
        from .models import StrategyWeights

        jobs.register()
        # Searches keep a namespace's learned weights a little while: a change forgets them.
        post_save.connect(_weights_changed, sender=StrategyWeights)
        post_delete.connect(_weights_changed, sender=StrategyWeights)


def _weights_changed(
    sender: type[StrategyWeights], instance: StrategyWeights, **kwargs: object
) -> None:
    from django.db import transaction

    from .pipeline.reads.weights import forget_learned_weights

    forget_learned_weights(instance.namespace_id)
    # Once more after the commit: a search between the two could have read the old rows.
    transaction.on_commit(lambda: forget_learned_weights(instance.namespace_id))
