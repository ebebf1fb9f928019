"""The import on 2 cores, on every core and on the GPU, each bounded in time, in one call.

    bash ops/device/ingest_bench.sh --bundle var/device-bundle --out DIR [options]

Made for a bare machine without network (the device machine: 16 cores, one GPU). The
packages the machine lacks, the model and the texts come from the bundle that
`ops/device/bundle.py` builds; torch, transformers, tokenizers, numpy and onnxruntime are the
machine's own. It runs on any Linux machine with this checkout's environment too: the tests
run it on the CPU in a small mode.

Each mode imports the bundle's scale-413k texts with `manage.py import_memories --workers W`
into its own fresh copy of one migrated database, and is stopped at its time limit:

  cpu2  2 cores: the command, its workers and PostgreSQL pinned to 2 cores; ONNX (as shipped)
  cpu   every core, ONNX on the CPU
  gpu   every core and the GPU: EMBEDDING_BACKEND=torch, EMBEDDING_DEVICE=cuda; skipped, and
        said so, where torch sees no CUDA device

A mode's rate is the memories stored per second from its first committed batch to its end
(the database is polled twice a second): the start-up (Django, reading and checking the
file, each worker loading the model) is paid once per import, not per core, so it does not
decide the comparison. The whole run's rate and the command's own are reported beside it.
Writes ingest.json and ingest.md to --out.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODES = ("cpu2", "cpu", "gpu")
BASE_DB = "ingest_base"
TARGET_SCALING = 3.0  # every core against 2 cores
TARGET_GPU = 2_000.0  # memories/s
POLL_S = 0.5
COMMAND_RATE = re.compile(r": (\d+) new.* in ([\d.]+)s \(([\d.]+) memories/s\)")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "var/device-bundle")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--var", type=Path, help="data dir (default: a fresh one in /tmp)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--texts", type=int, default=0, help="at most this many (0: all)")
    parser.add_argument("--texts-cpu2", type=int, default=30_000)
    parser.add_argument("--seconds", type=float, default=100, help="the limit of each mode")
    parser.add_argument("--deadline", type=float, default=480, help="for the whole run")
    parser.add_argument("--workers-cpu2", type=int, default=2)
    parser.add_argument("--workers-cpu", type=int, default=8)
    parser.add_argument("--workers-gpu", type=int, default=12)
    parser.add_argument("--keep", action="store_true", help="keep the modes' databases")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    var = (args.var or Path(f"/tmp/memoryhub-ingest-{os.getpid()}")).resolve()
    var.mkdir(parents=True, exist_ok=True)
    steps: dict[str, float] = {}
    with _timed(steps, "unpack_s"):
        site = _unpack_site(args.bundle, var)
        model = _restore_model(args.bundle, var)
        texts = _texts(args.bundle, var, args.texts)
    env = _environment(var, site, model)
    from memoryhub.db import embedded_database  # needs the unpacked packages

    with _timed(steps, "database_s"):
        server = embedded_database(var, BASE_DB)
        _manage(env | {"EMBEDDED_DATABASE_NAME": BASE_DB}, "migrate", "--noinput")
    bench = _Bench(args, env, server, var, texts, started)
    with _timed(steps, "onnx_export_s"):
        warm = "from apps.vectors import embeddings; embeddings.warm()"
        try:
            _manage(env | {"EMBEDDED_DATABASE_NAME": BASE_DB}, "shell", "-c", warm)
        except SystemExit as exc:  # the CPU modes cannot run; the GPU mode still can
            bench.onnx_error = str(exc)[-1500:]
            print(bench.onnx_error, file=sys.stderr)
    results = []
    for mode in args.modes.split(","):
        try:
            results.append(bench.run(mode))
        except Exception as exc:  # the other modes still run, and the summary says what broke
            results.append({"mode": mode, "skipped": f"failed: {exc!r}"[:500]})
        log = var / f"{mode}.log"
        if log.exists():  # the command's own output comes back with the summary
            (args.out / log.name).write_text(log.read_text()[-200_000:])
    summary = _summary(results, steps, bench.machine(), texts)
    (args.out / "ingest.json").write_text(json.dumps(summary, indent=2))
    markdown = _markdown(summary)
    (args.out / "ingest.md").write_text(markdown)
    print(markdown)
    if not args.var:  # a data dir of its own: its server and files go with it
        from memoryhub.db import stop_embedded

        stop_embedded(var / "pgdata")
        shutil.rmtree(var, ignore_errors=True)
    return 0


class _timed:
    def __init__(self, steps: dict, name: str):
        self.steps, self.name = steps, name

    def __enter__(self):
        self.start = time.monotonic()

    def __exit__(self, *exc):
        self.steps[self.name] = round(time.monotonic() - self.start, 1)
        return False


def _unpack_site(bundle: Path, var: Path) -> Path | None:
    """The bundle's packages, unpacked once; None where the bundle has none (this checkout's
    environment has them)."""
    archive = bundle / "site.tar.xz"
    if not archive.exists():
        return None
    site = var / "site"
    if not (site / ".unpacked").exists():
        import tarfile

        with tarfile.open(archive) as tar:
            tar.extractall(site, filter="tar")
        (site / ".unpacked").touch()
    sys.path.insert(0, str(site))
    return site


def _restore_model(bundle: Path, var: Path) -> Path | None:
    """The bundle's model with its float weights restored; None: the packaged model."""
    packed = bundle / "model/weights.npz.xz"
    if not packed.exists():
        return None
    from ops.device.bundle import restore_weights  # needs numpy and safetensors

    model = var / "model"
    if not (model / "model.safetensors").exists():
        shutil.copytree(bundle / "model", model, dirs_exist_ok=True)
        (model / packed.name).unlink()
        restore_weights(packed, model / "model.safetensors")
    return model


def _texts(bundle: Path, var: Path, limit: int) -> Path:
    """The bundle's texts as plain JSON lines (at most `limit`, 0 for all)."""
    target = var / "texts.jsonl"
    count = 0
    with (
        lzma.open(bundle / "texts.jsonl.xz", "rt", encoding="utf-8") as src,
        target.open("w", encoding="utf-8") as out,
    ):
        for line in src:
            if limit and count == limit:
                break
            out.write(line)
            count += 1
    return target


def _head(texts: Path, count: int, var: Path) -> Path:
    target = var / f"texts-{count}.jsonl"
    with texts.open(encoding="utf-8") as src, target.open("w", encoding="utf-8") as out:
        for number, line in enumerate(src):
            if number == count:
                break
            out.write(line)
    return target


def _count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def _environment(var: Path, site: Path | None, model: Path | None) -> dict:
    env = dict(os.environ)
    paths = [str(site)] if site else []
    env["PYTHONPATH"] = os.pathsep.join([*paths, str(ROOT), env.get("PYTHONPATH", "")])
    env.update(
        DJANGO_SETTINGS_MODULE="memoryhub.settings.base",
        MEMORYHUB_VAR_DIR=str(var),
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    if model:
        env["EMBEDDING_MODEL"] = str(model)
    for name in ("CELERY_BROKER_URL", "DATABASE_URL", "EMBEDDING_BACKEND", "EMBEDDING_DEVICE"):
        env.pop(name, None)
    return env


def _manage(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"manage.py {args[0]} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


class _Bench:
    def __init__(self, args, env: dict, server, var: Path, texts: Path, started: float):
        self.args, self.env, self.server, self.var = args, env, server, var
        self.texts = texts
        self.deadline = started + args.deadline
        self.all_cores = sorted(os.sched_getaffinity(0))
        self.gpu = None
        self.onnx_error = None

    def connect(self, name: str):
        import psycopg

        server = self.server
        return psycopg.connect(
            dbname=name, user=server.user, host=str(server.socket_dir), port=server.port,
            autocommit=True,
        )  # fmt: skip

    def run(self, mode: str) -> dict:
        if mode not in MODES:
            raise SystemExit(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
        result: dict = {"mode": mode}
        if mode == "gpu":
            self.gpu = _probe_gpu(self.env)
            if not self.gpu.get("cuda"):
                return result | {"skipped": f"no GPU: {self.gpu.get('why')}"}
        elif self.onnx_error:
            return result | {"skipped": "the ONNX encoder did not load (log.txt says why)"}
        left = self.deadline - time.monotonic()
        later = len(self.args.modes.split(",")) - 1 - self.args.modes.split(",").index(mode)
        seconds = min(self.args.seconds, left - 20 - 30 * later)
        if seconds < 15:
            return result | {"skipped": f"no time left ({left:.0f} s before the deadline)"}
        cores = two_cores(self.all_cores) if mode == "cpu2" else self.all_cores
        workers = getattr(self.args, f"workers_{mode}")
        texts = self.texts
        if mode == "cpu2" and self.args.texts_cpu2:
            texts = _head(self.texts, self.args.texts_cpu2, self.var)
        env = self.env | {"EMBEDDED_DATABASE_NAME": f"ingest_{mode}"}
        if mode == "gpu":
            env |= {"EMBEDDING_BACKEND": "torch", "EMBEDDING_DEVICE": "cuda"}
        else:
            env |= {"EMBEDDING_BACKEND": "onnx", "EMBEDDING_DEVICE": "cpu"}
        result |= {
            "cores": len(cores),
            "cpu_ids": cores if len(cores) <= 4 else f"{len(cores)} (all)",
            "workers": workers,
            "encoder": env["EMBEDDING_BACKEND"] + (" on the GPU" if mode == "gpu" else ""),
            "texts": _count_lines(texts),
            "limit_s": round(seconds, 1),
        }
        self._fresh_database(env["EMBEDDED_DATABASE_NAME"])
        pinned = self._pin_postgres(cores)
        try:
            result |= self._import(env, texts, workers, cores, seconds, mode)
        finally:
            self._pin_postgres(self.all_cores)
            if not self.args.keep:
                self._drop(env["EMBEDDED_DATABASE_NAME"])
        result["postgres_pinned"] = pinned
        return result

    def _fresh_database(self, name: str) -> None:
        with self.connect("postgres") as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            for attempt in range(20):  # the template must have no session open on it
                try:
                    conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{BASE_DB}"')
                    return
                except Exception:
                    if attempt == 19:
                        raise
                    time.sleep(0.5)

    def _drop(self, name: str) -> None:
        with self.connect("postgres") as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def _pin_postgres(self, cores: list[int]) -> bool:
        """PostgreSQL's processes on `cores` (new backends inherit the postmaster's set)."""
        import psutil

        try:
            first = (self.var / "pgdata/postmaster.pid").read_text().split("\n", 1)[0]
            postmaster = psutil.Process(int(first))
            for process in [postmaster, *postmaster.children(recursive=True)]:
                os.sched_setaffinity(process.pid, cores)
        except (OSError, ValueError, psutil.Error):
            return False
        return True

    def _import(self, env, texts: Path, workers: int, cores, seconds: float, mode: str) -> dict:
        command = [sys.executable, "manage.py", "import_memories", str(texts)]
        command += ["--namespace", f"ingest-{mode}", "--workers", str(workers), "--no-progress"]
        log_path = self.var / f"{mode}.log"
        polls: list[tuple[float, int]] = []
        with log_path.open("w") as log, self.connect(env["EMBEDDED_DATABASE_NAME"]) as conn:
            start = time.monotonic()
            process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, preexec_fn=lambda: os.sched_setaffinity(0, cores),
            )  # fmt: skip
            while process.poll() is None and time.monotonic() - start < seconds:
                time.sleep(POLL_S)
                polls.append((time.monotonic() - start, _stored(conn)))
            finished = process.poll() is not None
            if not finished:
                _stop(process)
            elapsed = time.monotonic() - start
            stored = _stored(conn)
        polls.append((elapsed, stored))
        output = log_path.read_text()
        out = {
            "finished": finished and process.returncode == 0,
            "stored": stored,
            "seconds": round(elapsed, 1),
            "whole_run_per_s": round(stored / elapsed, 1),
            **_steady(polls),
        }
        if finished and process.returncode:
            out["error"] = output[-2000:]
        if found := COMMAND_RATE.search(output):
            out["command_per_s"] = float(found.group(3))
        return out

    def machine(self) -> dict:
        cpu = ""
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with self.connect("postgres") as conn:
            postgres = conn.execute("SHOW server_version").fetchone()[0]
        return {
            "cores": len(self.all_cores),
            "cpu": cpu,
            "python": platform.python_version(),
            "postgres": postgres,
            "gpu": self.gpu or {},
            "commit": _commit(),
            "measured_at_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        }


def _stored(conn) -> int:
    return conn.execute("SELECT count(*) FROM memories_memory").fetchone()[0]


def _stop(process: subprocess.Popen) -> None:
    """The command and its workers (one process group): what they committed stays."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _steady(polls: list[tuple[float, int]]) -> dict:
    """Memories/s from the first poll that saw rows to the last poll that saw more."""
    seen = [(t, n) for t, n in polls if n > 0]
    if not seen:
        return {"memories_per_s": 0.0, "first_row_s": None}
    first_t, first_n = seen[0]
    grown = [(t, n) for t, n in seen if n > first_n]
    out = {"first_row_s": round(first_t, 1)}
    if grown:
        last_t, last_n = grown[-1]
        out["memories_per_s"] = round((last_n - first_n) / (last_t - first_t), 1)
    else:  # everything arrived between two polls: the whole run is all there is
        out["memories_per_s"] = round(first_n / max(first_t, 1e-9), 1)
    return out


def _probe_gpu(env: dict) -> dict:
    code = (
        "import json\ntry:\n import torch\nexcept ImportError as exc:\n"
        " print(json.dumps({'why': f'torch is not installed ({exc})'})); raise SystemExit\n"
        "ok = torch.cuda.is_available()\n"
        "print(json.dumps({'cuda': ok, 'torch': torch.__version__, 'cuda_version': "
        "torch.version.cuda, 'name': torch.cuda.get_device_name(0) if ok else None, "
        "'why': None if ok else 'torch sees no CUDA device'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"why": f"the probe failed: {done.stderr[-500:]}"}


def _commit() -> str | None:
    try:  # the device's copy of the tree may come without git or its history
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return None
    return done.stdout.strip() or None


def two_cores(cores: list[int]) -> list[int]:
    """Two cores of different physical cores where the machine says which share one (two
    hyperthreads of one core would make "2 cores" half a core short)."""

    def physical(cpu: int) -> tuple[str, str] | None:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            package = (topology / "physical_package_id").read_text().strip()
            return package, (topology / "core_id").read_text().strip()
        except OSError:
            return None

    first = cores[0]
    for other in cores[1:]:
        if physical(other) is None or physical(other) != physical(first):
            return [first, other]
    return cores[:2]


def _summary(results: list[dict], steps: dict, machine: dict, texts: Path) -> dict:
    by_mode = {r["mode"]: r for r in results}
    rate = {m: r.get("memories_per_s") for m, r in by_mode.items() if "skipped" not in r}
    summary = {"machine": machine, "setup": steps, "texts_offered": _count_lines(texts)}
    summary["modes"] = results
    if rate.get("cpu2") and rate.get("cpu"):
        ratio = round(rate["cpu"] / rate["cpu2"], 2)
        summary["cpu_vs_cpu2"] = ratio
        summary["scaling_target_met"] = ratio >= TARGET_SCALING
    if rate.get("gpu") is not None:
        summary["gpu_target_met"] = rate["gpu"] >= TARGET_GPU
    return summary


def _markdown(summary: dict) -> str:
    machine = summary["machine"]
    gpu = machine["gpu"].get("name") or "none"
    lines = [
        f"Ingest of scale-413k texts, {machine['measured_at_utc']} UTC, commit "
        f"{machine['commit']}: {machine['cores']} cores ({machine['cpu']}), GPU {gpu}, "
        f"Python {machine['python']}, PostgreSQL {machine['postgres']}.",
        "",
        "| mode | cores | workers | encoder | texts | stored | finished | first row s "
        "| memories/s | whole run /s | command /s |",
        "|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in summary["modes"]:
        if "skipped" in r:
            lines.append(f"| {r['mode']} | | | skipped: {r['skipped']} | | | | | | | |")
            continue
        lines.append(
            f"| {r['mode']} | {r['cores']} | {r['workers']} | {r['encoder']} | {r['texts']:,} "
            f"| {r['stored']:,} | {'yes' if r['finished'] else 'no'} | {r['first_row_s']} "
            f"| **{r['memories_per_s']}** | {r['whole_run_per_s']} "
            f"| {r.get('command_per_s', '')} |"
        )
    lines.append("")
    if "cpu_vs_cpu2" in summary:
        met = "met" if summary["scaling_target_met"] else "missed"
        lines.append(
            f"Every core against 2 cores: {summary['cpu_vs_cpu2']}x (target >= 3x: {met})."
        )
    if "gpu_target_met" in summary:
        met = "met" if summary["gpu_target_met"] else "missed"
        lines.append(f"GPU: target >= 2,000 memories/s {met}.")
    lines.append(f"Set-up (s): {json.dumps(summary['setup'])}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
