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


@pytest.fixture
def clean_vector_graph(transactional_db):
    """The memories' HNSW graph without the entries of rows that earlier tests rolled back.
    Those stay in the graph until VACUUM, and tests store the same texts again and again:
    pgvector links copies of one vector to each other, so the copies pile into islands a walk
    can end in (apps/search/pipeline/reads/semantic.py). A test that measures what a walk
    finds starts from a graph of live rows only (VACUUM runs outside a transaction: the test
    is a transactional one)."""
    from django.db import connection

    from apps.memories.models import Memory

    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM {Memory._meta.db_table}")
