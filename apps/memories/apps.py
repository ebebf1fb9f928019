from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "apps.memories"
    label = "memories"

    def ready(self) -> None:
        from apps.core.health import register_health_check

        from . import jobs
        from .embeddings import model_info

        jobs.register()
        register_health_check("embedding_model", model_info)
