from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "apps.api"
    label = "api"

    def ready(self) -> None:
        # Importing auth registers the OpenAPI security scheme; it reads the token model, which
        # Django lets a module import only once every app is loaded.
        from . import auth  # noqa: F401
