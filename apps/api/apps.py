from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "apps.api"
    label = "api"

    def ready(self) -> None:
        from . import auth  # noqa: F401  (registers the OpenAPI security scheme)
