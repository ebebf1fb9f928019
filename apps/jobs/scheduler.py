"""The in-server scheduler: the periodic jobs of a server that has no Celery broker.

`make run` on a laptop starts uvicorn and nothing else, so without this nothing would fold
searches into usage counts, queue near-duplicates or empty the trash. Each web process starts
one daemon thread (`start()`); the thread that holds a Postgres advisory lock on a connection
of its own is the scheduler for every process on that database, the others wait and take over
when its process ends (the lock goes with its connection). So a job never runs twice at once
on account of the schedule, and the job runner's per-(job, namespace) locks still guard against
a run started by hand or by a write meanwhile.

The schedule (a list of `Entry`) lives with the project (memoryhub/celery.py, next to the beat
schedule it stands in for), so this module names no job of its own. An entry is due when its
last run with the same trigger started more than `every` seconds ago; the last runs are read
from JobRun when the thread becomes the scheduler, so a restart does not re-run the daily jobs.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

import psycopg
from django.conf import settings
from django.db import close_old_connections, connection

from apps.jobs.locks import lock_key
from apps.jobs.models import JobRun
from apps.jobs.services import job_execute

logger = logging.getLogger(__name__)

# The lock that makes one thread the scheduler (namespace 0: the whole database).
LEADER_LOCK = lock_key("scheduler", 0)


@dataclass(frozen=True)
class Entry:
    """Run `job` (a registered job, over all namespaces) or `call` every `every` seconds.

    `quick` entries (the minute-by-minute ones) run in the scheduler's own thread; the others
    in a second thread, one after another, so an hour of re-embedding after a model change
    does not hold up the usage counts."""

    name: str
    every: float
    job: str = ""
    call: Callable[[], object] | None = None
    options: dict = field(default_factory=dict)
    trigger: str = "scheduler"
    quick: bool = False


class Scheduler:
    def __init__(self, entries: list[Entry], *, tick: float, first_delay: float) -> None:
        self.entries = entries
        self.tick = tick
        self.first_delay = first_delay
        self.last: dict[str, float] = {}  # entry name -> time.time() of its last start
        self.stopped = threading.Event()
        self._lease: psycopg.Connection | None = None
        self._slow: threading.Thread | None = None

    # --- leadership -----------------------------------------------------------------------

    def _hold_lease(self) -> bool:
        """Whether this thread is the scheduler: it holds the leader lock on its connection."""
        if self._lease is not None:
            try:
                self._lease.execute("SELECT 1")
                return True
            except psycopg.Error:
                logger.warning("scheduler: lost its database connection; trying again")
                self._drop_lease()
        params = connection.get_connection_params()
        lease = psycopg.connect(**params, autocommit=True)
        held = lease.execute("SELECT pg_try_advisory_lock(%s, %s)", LEADER_LOCK).fetchone()[0]
        if not held:
            lease.close()
            return False
        self._lease = lease
        self._load_last_runs()
        logger.info("scheduler: this process runs the periodic jobs")
        return True

    def _drop_lease(self) -> None:
        if self._lease is not None:
            with contextlib.suppress(psycopg.Error):
                self._lease.close()
            self._lease = None

    def _load_last_runs(self) -> None:
        """Start from the runs already recorded (a restart does not redo the daily jobs)."""
        for entry in self.entries:
            if not entry.job:
                continue
            run = (
                JobRun.objects.filter(job=entry.job, trigger=entry.trigger)
                .order_by("-started_at")
                .first()
            )
            if run is not None:
                self.last[entry.name] = run.started_at.timestamp()

    # --- the loop -------------------------------------------------------------------------

    def due(self, now: float) -> list[Entry]:
        return [e for e in self.entries if now - self.last.get(e.name, 0.0) >= e.every]

    def run_due(self) -> None:
        due = self.due(time.time())
        slow = [entry for entry in due if not entry.quick]
        if slow and not self.busy():
            for entry in slow:  # dispatched now: not due again until their interval has passed
                self.last[entry.name] = time.time()
            self._slow = threading.Thread(
                target=self._run, args=(slow, True), name="job-scheduler-slow", daemon=True
            )
            self._slow.start()
        self._run([entry for entry in due if entry.quick], False)

    def busy(self) -> bool:
        """Whether the slow entries' thread is still at work."""
        return self._slow is not None and self._slow.is_alive()

    def _run(self, entries: list[Entry], own_thread: bool) -> None:
        try:
            for entry in entries:
                if self.stopped.is_set():
                    return
                self.last[entry.name] = time.time()
                try:
                    if entry.job:
                        job_execute(entry.job, trigger=entry.trigger, **entry.options)
                    else:
                        entry.call()
                except Exception:  # recorded on the JobRun; the next entries still run
                    logger.exception("scheduler: %s failed", entry.name)
        finally:
            if own_thread:
                connection.close()

    def loop(self) -> None:
        if self.stopped.wait(self.first_delay):
            return
        while not self.stopped.is_set():
            try:
                if self._hold_lease():
                    self.run_due()
            except Exception:
                logger.warning("scheduler: database not reachable", exc_info=True)
                self._drop_lease()
            finally:
                close_old_connections()
                connection.close()  # back to the pool between ticks
            self.stopped.wait(self.tick)
        self._drop_lease()

    def stop(self) -> None:
        self.stopped.set()


_scheduler: Scheduler | None = None
_lock = threading.Lock()


def enabled() -> bool:
    """ "auto" (the default) runs it when there is no broker; "on" always; "off" never."""
    mode = settings.JOBS_SCHEDULER
    return mode == "on" or (mode == "auto" and not settings.CELERY_BROKER_URL)


def start(entries: list[Entry]) -> Scheduler | None:
    """Start this process's scheduler thread once (a server process calls it at start)."""
    global _scheduler
    with _lock:
        if _scheduler is not None or not enabled():
            return _scheduler
        _scheduler = Scheduler(
            entries,
            tick=settings.JOBS_SCHEDULER_TICK_SECONDS,
            first_delay=settings.JOBS_SCHEDULER_FIRST_DELAY_SECONDS,
        )
        threading.Thread(target=_scheduler.loop, name="job-scheduler", daemon=True).start()
        return _scheduler


def every(**kwargs: float) -> float:
    return timedelta(**kwargs).total_seconds()
