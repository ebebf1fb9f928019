"""Shared fixtures: the real embedded Postgres (a test database on it) and the real model."""

from __future__ import annotations

import pytest

from apps.memories.models import Namespace
from apps.vectors.embeddings import get_model


@pytest.fixture(scope="session")
def embedding_model():
    """Load the real model once per test session."""
    return get_model()


@pytest.fixture
def namespace(db):
    return Namespace.objects.create(name="test-ns")


@pytest.fixture
def other_namespace(db):
    return Namespace.objects.create(name="other-ns")
