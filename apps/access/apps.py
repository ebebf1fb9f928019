from django.apps import AppConfig

from apps.core.health import register_health_check
from apps.core.permissions import register_namespace_policy


class AccessConfig(AppConfig):
    name = "apps.access"
    label = "access"

    def ready(self) -> None:
        # Querysets' restrict() (apps.core.permissions) asks this policy which namespaces a
        # principal may reach. Imported here: the policy reads models, which Django lets a
        # module import only once every app is loaded, after apps.py itself.
        from .cleanup import access_table_sizes
        from .permissions import namespaces_for

        register_namespace_policy(namespaces_for)
        # The tables strangers can grow, and their bound (cleanup.py).
        register_health_check("access_tables", access_table_sizes)
