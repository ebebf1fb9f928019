from django.apps import AppConfig


class TransferConfig(AppConfig):
    """Import and export, and the batches kept for the background: above the write path of
    apps.memories, calling its public functions only."""

    name = "apps.transfer"
    label = "transfer"
