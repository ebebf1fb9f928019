from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "apps.access"
    label = "access"

    def ready(self) -> None:
        # Querysets' restrict() (apps.core.permissions) asks this policy which namespaces a
        # principal may reach.
        from apps.core.permissions import register_namespace_policy

        from .permissions import namespaces_for

        register_namespace_policy(namespaces_for)
