"""docker-compose.yml and `make prod-check` describe the same production shape: both come from
ops/shape.py, rendered here with compose's service names. A change to one without the other
fails this test, naming the difference."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from ops import shape

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]

# What compose fills the shape's placeholders with (its ${...} stay as written in the file).
COMPOSE_PARAMS = {
    "secret_key": "${DJANGO_SECRET_KEY:?set DJANGO_SECRET_KEY}",
    "allowed_hosts": "${DJANGO_ALLOWED_HOSTS:-localhost,127.0.0.1}",
    "ssl_redirect": "${DJANGO_SECURE_SSL_REDIRECT:-true}",
    "public_url": "${MEMORYHUB_PUBLIC_URL:-}",
    "db_password": "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}",
    "db_host": "db",
    "db_port": 5432,
    "replica_host": "db-replica",
    "replica_port": 5432,
    "redis_host": "redis",
    "redis_port": 6379,
    # The compose network's addresses (docker's default private range): nginx is one of them.
    "trusted_proxies": "${TRUSTED_PROXIES:-172.16.0.0/12}",
    "debounce_seconds": "10",
    "drain_seconds": "60",
    "web_host": "0.0.0.0",
    "web_port": 8000,
    "beat_schedule": "/tmp/celerybeat-schedule",
}


def test_compose_runs_exactly_the_processes_of_the_shape():
    assert set(SERVICES) == set(shape.PROCESSES)


def test_every_app_process_gets_the_shapes_settings():
    expected = shape.app_env(COMPOSE_PARAMS)
    for name, spec in shape.PROCESSES.items():
        if spec["app"]:
            assert SERVICES[name]["environment"] == expected, name


def test_app_commands_match():
    for name, spec in shape.PROCESSES.items():
        if spec["app"]:
            compose_argv = shlex.split(SERVICES[name]["command"])
            assert compose_argv == shape.command(name, COMPOSE_PARAMS), name


def test_web_scale_and_start_order_match():
    assert SERVICES["web"]["deploy"]["replicas"] == shape.PROCESSES["web"]["replicas"] >= 2
    for name in ("web", "worker", "beat"):  # the script also migrates once, before them
        assert SERVICES[name]["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"
        }


def test_databases_are_postgres_of_the_same_major_with_a_streaming_replica():
    for name in ("db", "db-replica"):
        assert SERVICES[name]["image"] == f"pgvector/pgvector:pg{shape.POSTGRES_MAJOR}"
    replica_start = (ROOT / "ops/compose/replica-start.sh").read_text()
    assert f"pg_basebackup -h db -U {shape.REPLICATION_USER}" in replica_start
    assert " -R " in replica_start and "hot_standby=on" in replica_start
    assert (
        f"ROLE {shape.REPLICATION_USER} REPLICATION"
        in (ROOT / "ops/compose/primary-init.sh").read_text()
    )


def test_the_proxy_config_is_the_shapes_template():
    rendered = shape.nginx_conf(**shape.COMPOSE_NGINX)
    assert (ROOT / "ops/compose/nginx.conf").read_text() == rendered
