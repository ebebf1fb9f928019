import pytest


@pytest.mark.django_db
def test_healthz_reports_database_pgvector_and_model(client, embedding_model):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] and body["database"]["postgres"].startswith("18")
    major, minor = (int(x) for x in body["database"]["pgvector"].split(".")[:2])
    assert (major, minor) >= (0, 8)
    assert body["embedding_model"] == {
        "ok": True,
        "name": "all-MiniLM-L6-v2",
        "backend": "onnx",
        "dimensions": 384,
        "device": "cpu",
    }


def test_healthz_hides_raw_errors_from_anonymous_callers(client, monkeypatch):
    from apps.core import health

    def broken() -> dict:
        raise RuntimeError("connection to /tmp/mh/.s.PGSQL.5432 failed")

    monkeypatch.setattr(health, "database_state", broken)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"] == {"ok": False, "error": "unavailable"}
    assert ".s.PGSQL" not in response.content.decode()
