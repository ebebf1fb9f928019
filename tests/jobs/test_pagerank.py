"""PageRank against networkx as the oracle: ten power-iteration steps over google_matrix."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest

from apps.jobs.models import Job, JobRun
from apps.jobs.services import job_execute
from apps.memories.jobs.pagerank import graph_links, pagerank_scores
from apps.memories.models import Memory, Relation

RELATIONS = list(Relation.values)


def oracle(nodes: list, links: list[tuple]) -> dict:
    """Ten steps x <- x·G from uniform, G = networkx.google_matrix(alpha=0.85)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    for source, target, weight in links:
        if graph.has_edge(source, target):
            graph[source][target]["weight"] += weight
        else:
            graph.add_edge(source, target, weight=weight)
    google = nx.google_matrix(graph, alpha=0.85, nodelist=nodes, weight="weight")
    x = np.full(len(nodes), 1.0 / len(nodes))
    for _ in range(10):
        x = x @ google
    return dict(zip(nodes, np.asarray(x).ravel(), strict=True))


def random_graph(rng: random.Random, n: int, m: int) -> list[tuple]:
    edges = set()
    while len(edges) < m:
        s, t = rng.sample(range(n), 2)
        edges.add((s, t, rng.choice(RELATIONS)))
    return [(s, t, r, round(rng.uniform(0.05, 1.0), 3)) for s, t, r in sorted(edges)]


@pytest.mark.parametrize("seed", range(20))
def test_power_iteration_equals_networkx_google_matrix(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    links = graph_links(random_graph(rng, n, rng.randint(0, n * 3))) if n > 1 else []
    scores = (
        pagerank_scores(n, *zip(*links, strict=True)) if links else pagerank_scores(n, [], [], [])
    )
    expected = oracle(list(range(n)), links)
    assert np.allclose(scores, [expected[i] for i in range(n)], rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stored_scores_equal_oracle_on_random_graphs(
    namespace, memories_factory, edges_factory, seed
):
    rng = random.Random(seed)
    memories = memories_factory(namespace, 30)
    edges = random_graph(rng, 25, 50)  # memories 25..29 stay isolated
    edges_factory(namespace, [(memories[s], memories[t], r, w) for s, t, r, w in edges])

    run = job_execute(Job.PAGERANK, namespace_id=namespace.pk)

    stored = dict(Memory.objects.filter(namespace=namespace).values_list("id", "pagerank_score"))
    links = graph_links([(memories[s].pk, memories[t].pk, r, w) for s, t, r, w in edges])
    expected = oracle([m.pk for m in memories], links)
    for memory_id, score in expected.items():
        assert stored[memory_id] == pytest.approx(score, abs=1e-9)
    assert sum(stored.values()) == pytest.approx(1.0, abs=1e-9)
    isolated = [stored[m.pk] for m in memories[25:]]
    assert max(isolated) == pytest.approx(min(stored.values()), abs=1e-12)
    assert run.changes["memories_updated"] == 30 and run.changes["isolated"] >= 5


def _converged_order(nodes, links):
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_weighted_edges_from(links)
    ranks = nx.pagerank(graph, alpha=0.85, tol=1e-12, max_iter=1000)
    return ranks


def test_star_and_chain_order_like_converged_networkx(namespace, memories_factory, edges_factory):
    hub, *leaves = memories_factory(namespace, 6)  # five leaves point at the hub
    a, b, c, d = memories_factory(namespace, 4)  # chain a -> b -> c -> d
    loner = memories_factory(namespace, 1)[0]
    links = [(leaf, hub, Relation.DEPENDS_ON, 1.0) for leaf in leaves]
    links += [(a, b, Relation.CAUSED, 1.0), (b, c, Relation.CAUSED, 1.0)]
    links += [(c, d, Relation.CAUSED, 1.0)]
    edges_factory(namespace, links)

    job_execute(Job.PAGERANK, namespace_id=namespace.pk)
    score = dict(Memory.objects.filter(namespace=namespace).values_list("id", "pagerank_score"))
    converged = _converged_order(list(score), [(s.pk, t.pk, w) for s, t, _, w in links])

    def order(ms):
        return sorted(ms, key=lambda m: -score[m.pk])

    def nx_order(ms):
        return sorted(ms, key=lambda m: -converged[m.pk])

    assert order([hub, leaves[0]]) == nx_order([hub, leaves[0]]) == [hub, leaves[0]]
    assert order([a, b, c, d]) == nx_order([a, b, c, d]) == [d, c, b, a]
    assert score[hub.pk] == max(score.values())
    assert score[loner.pk] == pytest.approx(min(score.values()), abs=1e-12)
    assert score[loner.pk] == pytest.approx(score[a.pk], abs=1e-12)  # no incoming links
    # Every pair networkx clearly orders (converged scores 1% apart) is ordered the same way.
    ids = list(score)
    for i in ids:
        for j in ids:
            if converged[i] > converged[j] * 1.01:
                assert score[i] > score[j]


def test_supersedes_credits_the_replacement(namespace, memories_factory, edges_factory):
    new, old = memories_factory(namespace, 2)
    edges_factory(namespace, [(new, old, Relation.SUPERSEDES, 1.0)])
    job_execute(Job.PAGERANK, namespace_id=namespace.pk)
    new.refresh_from_db()
    old.refresh_from_db()
    assert new.pagerank_score > old.pagerank_score


def test_rerun_changes_nothing_and_namespaces_stay_apart(
    namespace, other_namespace, memories_factory, edges_factory
):
    a, b = memories_factory(namespace, 2)
    x, y, z = memories_factory(other_namespace, 3)
    edges_factory(namespace, [(a, b, Relation.CAUSED, 1.0)])
    edges_factory(other_namespace, [(x, y, Relation.CAUSED, 1.0)])

    first = job_execute(Job.PAGERANK)  # all namespaces
    again = job_execute(Job.PAGERANK)

    assert first.changes["namespaces"] == 2 and first.changes["memories_updated"] == 5
    assert again.changes["memories_updated"] == 0
    ours = Memory.objects.filter(namespace=namespace).values_list("pagerank_score", flat=True)
    theirs = Memory.objects.filter(namespace=other_namespace).values_list(
        "pagerank_score", flat=True
    )
    assert sum(ours) == pytest.approx(1.0) and sum(theirs) == pytest.approx(1.0)
    assert JobRun.objects.filter(job=Job.PAGERANK, status="succeeded").count() == 2
