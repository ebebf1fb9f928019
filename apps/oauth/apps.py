from django.apps import AppConfig

from apps.core.health import register_health_check


class OAuthConfig(AppConfig):
    name = "apps.oauth"
    label = "memoryhub_oauth"
    verbose_name = "OAuth connections"

    def ready(self) -> None:
        # The sizes and the redirect rules read DOT's models, which Django lets a module import
        # only once every app is loaded, after apps.py itself.
        from oauth2_provider.models import Application

        from .cleanup import oauth_table_sizes
        from .redirects import allowed_schemes_of

        register_health_check("oauth_tables", oauth_table_sizes)

        # django-oauth-toolkit asks each application which redirect schemes it may use (its
        # documented hook for per-client schemes); answered here rather than by a swapped
        # application model, which would move the existing applications' table. The answer
        # serves the model's validation (registration, admin) and every redirect it sends.
        def get_allowed_schemes(application: Application) -> list[str]:
            return allowed_schemes_of(application.redirect_uris)

        Application.get_allowed_schemes = get_allowed_schemes
