"""The device machine's ingest benchmark (ops/device/) runs here on the CPU: a bundle of a few
hundred texts (this checkout's environment has the packages and the model), the 2-core mode
through `import_memories` against the real embedded PostgreSQL and the real model, and the GPU
mode says that it was skipped. The weights' packing is checked on its own."""

from __future__ import annotations

import json
import lzma
import os
import subprocess
from pathlib import Path

import numpy as np
from django.conf import settings
from safetensors.numpy import load_file, save_file

from ops.device.bundle import DEFAULT_SOURCE, _pack_weights, build_texts, restore_weights

ROOT = Path(__file__).resolve().parents[2]
TEXTS = 300


def _bundle(path: Path) -> Path:
    """scale-413k texts where the shared benchmarks are present, else made-up records."""
    path.mkdir()
    if (DEFAULT_SOURCE / "memories.jsonl.gz").exists():
        assert build_texts(path, DEFAULT_SOURCE, TEXTS) == TEXTS
        return path
    words = [
        "index",
        "query",
        "vector",
        "batch",
        "worker",
        "import",
        "memory",
        "text",
        "core",
        "machine",
    ]
    with lzma.open(path / "texts.jsonl.xz", "wt", encoding="utf-8") as out:
        for i in range(TEXTS):
            content = " ".join(words[(i * k) % len(words)] for k in range(1, 12)) + f" {i}"
            out.write(json.dumps({"id": f"t-{i}", "content": content, "tags": ["made"]}) + "\n")
    return path


def test_the_script_imports_on_two_cores_and_reports_no_gpu(tmp_path):
    bundle, out = _bundle(tmp_path / "bundle"), tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    # The test session's server and model cache (VAR_DIR); the script's databases are its own.
    command = ["bash", "ops/device/ingest_bench.sh", "--bundle", str(bundle), "--out", str(out)]
    command += ["--var", str(settings.VAR_DIR), "--modes", "cpu2,gpu", "--seconds", "120"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    summary = json.loads((out / "ingest.json").read_text())
    cpu2, gpu = summary["modes"]
    cores = min(2, len(os.sched_getaffinity(0)))
    assert (cpu2["mode"], cpu2["cores"], cpu2["workers"]) == ("cpu2", cores, 2)
    assert cpu2["finished"] and cpu2["stored"] == TEXTS
    assert cpu2["memories_per_s"] > 0 and cpu2["whole_run_per_s"] > 0
    assert cpu2["command_per_s"] > 0
    if "skipped" in gpu:
        assert gpu["skipped"] == "no GPU: torch sees no CUDA device"
    else:  # a machine with a GPU measures it
        assert gpu["stored"] > 0 and gpu["memories_per_s"] > 0
    report = (out / "ingest.md").read_text()
    assert f"| cpu2 | {cores} | 2 | onnx | {TEXTS} | {TEXTS} | yes |" in report
    assert "skipped: no GPU" in report or "| gpu |" in report


def test_packed_weights_come_back_within_half_a_step(tmp_path):
    rng = np.random.default_rng(0)
    tensors = {
        "layer.weight": rng.standard_normal((64, 32)).astype(np.float32),
        "layer.bias": rng.standard_normal(64).astype(np.float32),
        "position_ids": np.arange(8, dtype=np.int64)[None, :],
    }
    save_file(tensors, str(tmp_path / "model.safetensors"))
    _pack_weights(tmp_path, tmp_path / "weights.npz.xz")
    restore_weights(tmp_path / "weights.npz.xz", tmp_path / "restored.safetensors")
    back = load_file(str(tmp_path / "restored.safetensors"))

    assert {k: v.dtype for k, v in back.items()} == {k: v.dtype for k, v in tensors.items()}
    step = np.abs(tensors["layer.weight"]).max(axis=1, keepdims=True) / 127
    assert np.all(np.abs(back["layer.weight"] - tensors["layer.weight"]) <= step / 2 + 1e-7)
    assert np.allclose(back["layer.bias"], tensors["layer.bias"], atol=1e-3)
    assert np.array_equal(back["position_ids"], tensors["position_ids"])
