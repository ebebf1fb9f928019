from django.apps import AppConfig

from apps.core.health import register_health_check


class MemoriesConfig(AppConfig):
    name = "apps.memories"
    label = "memories"

    def ready(self) -> None:
        # The jobs and the encoder read models, which Django lets a module import only once
        # every app is loaded, after apps.py itself.
        from apps.vectors import embeddings

        from . import dialog, jobs, unindexed

        jobs.register()
        register_health_check("embedding_model", embeddings.model_info)
        register_health_check("dialog_passages", dialog.health)
        register_health_check("vector_index", unindexed.health)
