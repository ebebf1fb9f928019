"""Export the local sentence-transformers weights to ONNX (and an int8 copy), once.

Only apps.vectors.embeddings calls this. The export reads the packaged weights with torch and
transformers, which are imported here and only when a file is missing: a process that finds
the files (every start after the first) never imports torch. Concurrent processes (several web
workers starting together) serialize on a file lock, and each file appears atomically.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import warnings
from pathlib import Path

logger = logging.getLogger(__name__)

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _fingerprint(model_dir: Path) -> str:
    """Changes when the weights or the config change, so a stale export is never used."""
    digest = hashlib.sha256()
    for name in ("config.json", "model.safetensors", "pytorch_model.bin"):
        path = model_dir / name
        if path.exists():
            stat = path.stat()
            digest.update(f"{name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:12]


def export_dir(model_dir: Path, cache_dir: Path) -> Path:
    return cache_dir / f"{model_dir.name}-{_fingerprint(model_dir)}"


def ensure_exported(model_dir: Path, cache_dir: Path, *, quantized: bool) -> Path:
    """Path of model.onnx (or model-int8.onnx), exporting it first if it is missing."""
    target_dir = export_dir(model_dir, cache_dir)
    plain = target_dir / "model.onnx"
    int8 = target_dir / "model-int8.onnx"
    wanted = int8 if quantized else plain
    if wanted.exists():
        return wanted
    target_dir.mkdir(parents=True, exist_ok=True)
    with open(target_dir / ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not plain.exists():
                logger.info("exporting %s to ONNX in %s (once)", model_dir, target_dir)
                _export(model_dir, plain)
            if quantized and not int8.exists():
                _quantize(plain, int8)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return wanted


def _export(model_dir: Path, target: Path) -> None:
    # torch and transformers cost seconds and memory at start-up; only a first export needs them.
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    class LastHiddenState(torch.nn.Module):
        """Keyword call, token embeddings out: pooling happens in numpy afterwards."""

        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            hidden: torch.Tensor = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            return hidden

    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    # The tracer warns about every Python branch on a tensor shape (transformers' masking and
    # attention code) and about how opset 17 spells advanced indexing; the exported graph gives
    # torch's vectors at any batch and length (tests/vectors/test_embeddings.py), so on a
    # newcomer's first start these lines only read as failures. Scoped to this export.
    transformers_logging.disable_progress_bar()
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore", torch.jit.TracerWarning)
            warnings.filterwarnings("ignore", message="Exporting aten::index", category=UserWarning)
            # The TorchScript exporter is chosen on purpose (dynamo=False: no onnxscript).
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.onnx")
            warnings.filterwarnings("ignore", message="You are using the legacy TorchScript")
            model = AutoModel.from_pretrained(str(model_dir)).eval()
            sample = torch.ones(2, 8, dtype=torch.long)
            torch.onnx.export(
                LastHiddenState(model),
                (sample, sample, torch.zeros_like(sample)),
                str(tmp),
                input_names=list(INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
            )
    finally:
        transformers_logging.enable_progress_bar()
    os.replace(tmp, target)


def _quantize(plain: Path, target: Path) -> None:
    # The quantizer pulls in onnx and sympy (start-up cost); only a first export needs it.
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    # Per-channel scales keep the vectors within ~0.99 cosine of the float model; per-tensor
    # scales drift to ~0.95 (measured on locomo-dev texts, docs/benchmarks.md).
    quantize_dynamic(str(plain), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
    os.replace(tmp, target)
