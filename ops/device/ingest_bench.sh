#!/usr/bin/env bash
# The ingest benchmark (ops/device/ingest_bench.py) with a Python that can run it: this
# checkout's .venv where there is one, else the machine's python3 (on the device machine the
# one that holds torch); the bundle brings the packages that Python lacks.
#   bash ops/device/ingest_bench.sh --bundle var/device-bundle --out DIR [--modes cpu2,cpu,gpu]
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-}
if [ -z "$python" ]; then
    if [ -x .venv/bin/python ]; then python=.venv/bin/python; else python=python3; fi
fi
echo "ingest_bench: $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])'), $(nproc) cores"
exec "$python" -m ops.device.ingest_bench "$@"
