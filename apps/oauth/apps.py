from django.apps import AppConfig


class OAuthConfig(AppConfig):
    name = "apps.oauth"
    label = "memoryhub_oauth"
    verbose_name = "OAuth connections"

    def ready(self) -> None:
        from oauth2_provider.models import Application

        from .redirects import allowed_schemes_of

        # django-oauth-toolkit asks each application which redirect schemes it may use (its
        # documented hook for per-client schemes); answered here rather than by a swapped
        # application model, which would move the existing applications' table. The answer
        # serves the model's validation (registration, admin) and every redirect it sends.
        def get_allowed_schemes(application: Application) -> list[str]:
            return allowed_schemes_of(application.redirect_uris)

        Application.get_allowed_schemes = get_allowed_schemes
