# memoryhub: `make run` serves everything on :8000, `make test` runs the checks and tests.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# Web worker processes (uvicorn reads the same variable); one per core suits most machines.
WEB_CONCURRENCY ?= 2

.PHONY: run test install lint typecheck mypy-baseline format migrate worker stop-db evaluate loadtest clean demo browser nginx \
	prod-check screenshots device-bundle

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# torch first and pinned: this machine's CPU build of 2.13.0 is on local disk.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

install: $(VENV)/.installed

migrate: install
	$(BIN)/python manage.py migrate --noinput

# The web server; with CELERY_BROKER_URL set also a Celery worker and beat, stopped with it
# (without one the server runs the periodic jobs itself: docs/jobs.md).
run: migrate
	$(BIN)/python manage.py ensure_admin --url http://$(HOST):$(PORT)
	$(BIN)/python manage.py serve --host $(HOST) --port $(PORT) --workers $(WEB_CONCURRENCY)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(MAKE) --no-print-directory typecheck

# mypy (config in pyproject.toml; `make lint` installs first, pre-commit calls this alone); a run
# that crashes fails, its errors go through the baseline:
# an error not in mypy-baseline.txt fails, and so does one listed there that is fixed.
typecheck:
	@mkdir -p var
	$(BIN)/mypy > var/mypy.txt || [ $$? -eq 1 ] || { cat var/mypy.txt; exit 2; }
	$(BIN)/mypy-baseline filter < var/mypy.txt

# Rewrite mypy-baseline.txt from today's errors, after fixing some (it must only shrink).
# From a cold cache: a warm one replays a module's old errors after the config changed.
mypy-baseline:
	@mkdir -p var
	rm -rf .mypy_cache
	$(BIN)/mypy > var/mypy.txt || [ $$? -eq 1 ] || { cat var/mypy.txt; exit 2; }
	$(BIN)/mypy-baseline sync < var/mypy.txt

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The browser tests drive the system Chromium (Debian packages chromium, chromium-driver);
# never a browser download.
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update && apt-get install -y chromium chromium-driver; \
		else echo "The browser tests need Chromium: sudo apt-get install chromium chromium-driver"; exit 1; fi; \
	fi

# nginx (Debian package nginx-light) for the test of the production shape under a path prefix
# (tests/core/test_path_prefix.py); `make prod-check` installs it the same way when missing.
nginx:
	@if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update && apt-get install -y nginx-light; \
		else echo "The path-prefix test needs nginx: sudo apt-get install nginx-light"; exit 1; fi; \
	fi

test: lint browser nginx
	$(BIN)/pytest

# The browser tests save their screenshots under var/screenshots (ignored); this reruns them
# to refresh the README's pictures in docs/screenshots (desktop, and phone-*.png at 390 px).
screenshots: install browser
	SCREENSHOTS_DIR=docs/screenshots $(BIN)/pytest tests/ui/test_browser_*.py -p no:cacheprovider

# A real worker and beat against Redis (defaults to the local one).
worker: migrate
	CELERY_BROKER_URL=$${CELERY_BROKER_URL:-redis://127.0.0.1:6379/0} $(BIN)/celery -A memoryhub \
		worker --beat --loglevel=info --concurrency=2 --schedule var/celerybeat-schedule

# A small populated namespace ("demo") for a first look at the web UI.
demo: migrate
	$(BIN)/python manage.py ensure_admin --url http://$(HOST):$(PORT)
	$(BIN)/python manage.py seed_demo

# Retrieval quality on the LoCoMo dev set; the command and the other benches live in lab/.
evaluate: migrate
	$(BIN)/python manage.py evaluate ../shared/benchmarks/locomo-dev --json var/evaluate.json

stop-db: install
	$(BIN)/python -c "from pathlib import Path; from memoryhub.db import stop_embedded; print('stopped' if stop_embedded(Path('var/pgdata')) else 'not running')"

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache

# Load test (locust, headless, bounded): starts its own server on :8599, prints the table.
# e.g. make loadtest LOADTEST_ARGS="--scenarios search --seconds 20"
loadtest: migrate
	$(BIN)/python loadtest/run.py $(LOADTEST_ARGS)

# The production shape on this machine (ops/prod_check.py): PostgreSQL primary + streaming
# replica on TCP, Redis, two web processes behind nginx, Celery worker and beat; every fault
# under load, then everything torn down. Not part of `make test`.
# PROD_CHECK_ARGS="--prefix /memory/" serves it all under a path (MEMORYHUB_PUBLIC_URL with a path).
prod-check: install
	nice -n 19 $(BIN)/python ops/prod_check.py $(PROD_CHECK_ARGS)

# What a GPU machine without network lacks for the ingest benchmark (ops/device/ingest_bench.sh):
# the packages its Python lacks, the model, 100,000 scale-413k texts, in var/device-bundle;
# prints the device call to make. e.g. make device-bundle DEVICE_BUNDLE_ARGS="--texts 50000"
device-bundle: install
	$(BIN)/python ops/device/bundle.py $(DEVICE_BUNDLE_ARGS)
