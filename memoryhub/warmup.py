"""What a server process does before it reports ready: every first-use cost a request would
otherwise pay (measured as a newcomer: 5.2 s for the first search, 9.1 s for the first time
expression dateparser could not read), paid once at start instead."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from django.db import close_old_connections
from django.urls import get_resolver

from apps.memories.models import Namespace
from apps.search.models import QueryLog
from apps.search.pipeline.analyse import analyse_query
from apps.search.pipeline.timeexpr import parse_time_expression
from apps.search.services import search
from apps.vectors.embeddings import embed_query, model_name
from apps.vectors.embeddings import warm as warm_encoder
from memoryhub.heap import settle_heap

logger = logging.getLogger(__name__)


def warm(*, http: bool = True) -> None:
    """`http=False` for the stdio server, which never routes a URL."""
    if http:
        get_resolver().url_patterns  # noqa: B018  imports every view module (DRF, MCP, UI)
    warm_encoder()
    now = datetime.now(UTC)
    text = "what did we decide last week"
    analyse_query(text, vector=embed_query(text), model_name=model_name(), now=now)  # centroids
    # dateparser loads its English data on its first miss: make that miss now.
    parse_time_expression("the blue moon", now)
    _warm_database()
    settle_heap()


# Namespaces searched during warm-up: the search path keeps per-namespace statistics (document
# counts for the lexical idf, the tag names entity detection matches), so the first search in
# a namespace costs more than the next ones. The most recently searched few are warmed.
WARM_NAMESPACES = 5


def _warm_database() -> None:
    """Open the connection pool and run the whole search path (read-only, not logged) in the
    namespaces searched most recently, so the first real searches pay no first-query costs.
    Skipped when the database is down: /healthz reports that separately."""
    try:
        recent = QueryLog.objects.order_by("-created_at").values_list("namespace_id", flat=True)
        ids = list(dict.fromkeys(recent[:200]))[:WARM_NAMESPACES]
        namespaces = list(Namespace.objects.filter(pk__in=ids)) or list(
            Namespace.objects.order_by("pk")[:1]
        )
        for namespace in namespaces:
            search(namespace=namespace, query="what did we decide last week?", log=False)
    except Exception:
        logger.warning("warm-up: database not reachable", exc_info=True)
    finally:
        close_old_connections()
