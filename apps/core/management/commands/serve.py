"""`manage.py serve`: the whole product in one command (what `make run` runs).

uvicorn serves the web UI, REST and MCP. With a broker (CELERY_BROKER_URL) a Celery worker with
beat runs beside it and the two stop together; without one the server runs the periodic jobs
itself (apps/jobs/scheduler.py), so a laptop needs nothing else.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

STOP_GRACE_SECONDS = 20


class Command(BaseCommand):
    help = "Serve the web UI, REST and MCP; with a broker, also a Celery worker and beat."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--workers", type=int, default=2, help="web processes")
        parser.add_argument(
            "--no-worker", action="store_true", help="never start a Celery worker here"
        )

    def handle(self, *args, host, port, workers, no_worker, **options):
        commands = {"web": self.web_command(host, port, workers)}
        if settings.CELERY_BROKER_URL and not no_worker:
            commands["worker"] = self.worker_command()
            self.stdout.write(f"Jobs: a Celery worker and beat on {settings.CELERY_BROKER_URL}.")
        else:
            self.stdout.write("Jobs: run by the web server itself (no CELERY_BROKER_URL).")
        sys.exit(supervise(commands))

    @staticmethod
    def web_command(host: str, port: int, workers: int) -> list[str]:
        return [
            *_tool("uvicorn"),
            "memoryhub.asgi:application",
            "--host",
            host,
            "--port",
            str(port),
            "--workers",
            str(workers),
            # Client addresses come from X-Forwarded-For only through TRUSTED_PROXIES (the
            # middleware), never from uvicorn's own trust of 127.0.0.1.
            "--no-proxy-headers",
            # A request's headers have a deadline (memoryhub/http.py).
            "--http",
            "memoryhub.http:HeaderDeadlineHttpTools",
        ]

    @staticmethod
    def worker_command() -> list[str]:
        schedule = Path(settings.VAR_DIR) / "celerybeat-schedule"
        return [
            *_tool("celery"),
            "-A",
            "memoryhub",
            "worker",
            "--beat",
            "--loglevel=info",
            "--concurrency=2",
            "--schedule",
            str(schedule),
        ]


def _tool(name: str) -> list[str]:
    """Run a console tool of this interpreter's environment as a module (no PATH lookup)."""
    return [sys.executable, "-m", name]


def supervise(commands: dict[str, list[str]]) -> int:
    """Start every command; when one ends or this process is told to stop (Ctrl-C, SIGTERM),
    stop the others and return the first one's exit status."""
    stopping = False

    def _stop(signum, frame):
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    processes = {name: subprocess.Popen(command) for name, command in commands.items()}
    status = 0
    try:
        while not stopping:
            ended = [(n, p.returncode) for n, p in processes.items() if p.poll() is not None]
            if ended:
                name, status = ended[0]
                print(f"serve: {name} exited ({status}); stopping the rest", file=sys.stderr)
                break
            time.sleep(0.5)
    finally:
        _stop_all(processes.values())
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return status


def _stop_all(processes) -> None:
    running = [p for p in processes if p.poll() is None]
    for process in running:
        process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for process in running:
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
