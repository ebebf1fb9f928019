from django.apps import AppConfig
from django.db.backends.signals import connection_created

from .readside import harden_connection


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        # Rows already odd in the database read as the nearest supported value (readside.py).
        # Connected here, not at import, so it holds once the app registry runs (Django's way).
        connection_created.connect(harden_connection, dispatch_uid="memoryhub-readside")
