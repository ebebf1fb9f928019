"""Memories written through the real write path, embedded by the real model."""

from __future__ import annotations

import pytest

from tests import factories


@pytest.fixture(autouse=True)
def _sync_querylog(settings):
    settings.SEARCH_QUERYLOG_SYNC = True


@pytest.fixture
def remember(namespace, embedding_model):
    """remember(items, ns=namespace) -> list[Memory]; items are dicts or plain strings."""

    def create(items, ns=None):
        return factories.memories(ns or namespace, items)

    return create


@pytest.fixture
def knowledge(remember):
    return remember(
        [
            {"content": "We chose PostgreSQL with pgvector for storage because it keeps vectors "
             "and rows in one transaction.", "category": "decision", "tags": ["database"]},
            {"content": "The EntityStore caches entities per request; clear it after writes.",
             "category": "pattern", "file_path": "apps/store/entity_store.py"},
            {"content": "Never run migrations on the production database during office hours.",
             "category": "warning", "tags": ["database", "ops"]},
            {"content": "Fixed the crash on startup: the settings module imported the model "
             "before the app registry was ready.", "category": "learning", "tags": ["bugfix"]},
            {"content": "Celery workers read the broker URL from CELERY_BROKER_URL.",
             "category": "fact"},
            {"content": "Melanie painted a sunrise over the lake last summer.",
             "category": "conversation", "tags": ["melanie"]},
        ]
    )  # fmt: skip
