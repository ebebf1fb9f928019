from django.apps import AppConfig

from apps.core.permissions import register_namespace_policy


class AccessConfig(AppConfig):
    name = "apps.access"
    label = "access"

    def ready(self) -> None:
        # Querysets' restrict() (apps.core.permissions) asks this policy which namespaces a
        # principal may reach. Imported here: the policy reads models, which Django lets a
        # module import only once every app is loaded, after apps.py itself.
        from .permissions import namespaces_for

        register_namespace_policy(namespaces_for)
