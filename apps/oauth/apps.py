from django.apps import AppConfig


class OAuthConfig(AppConfig):
    name = "apps.oauth"
    label = "memoryhub_oauth"
    verbose_name = "OAuth connections"
