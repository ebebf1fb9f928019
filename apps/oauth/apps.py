from django.apps import AppConfig

from apps.core.health import register_health_check


class OAuthConfig(AppConfig):
    name = "apps.oauth"
    label = "memoryhub_oauth"
    verbose_name = "OAuth connections"

    def ready(self) -> None:
        # The sizes read DOT's models, which Django lets a module import only once every app
        # is loaded, after apps.py itself.
        from .cleanup import oauth_table_sizes

        register_health_check("oauth_tables", oauth_table_sizes)
