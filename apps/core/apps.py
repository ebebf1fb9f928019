from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from .readside import harden_connection

        # Rows already odd in the database read as the nearest supported value (readside.py).
        connection_created.connect(harden_connection, dispatch_uid="memoryhub-readside")
