"""Settings shared by every environment; every value comes from the environment (django-environ)."""

import datetime
import urllib.parse
from pathlib import Path

import django_stubs_ext
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from claimcheck.terms import JudgeMode
from config import ports
from config.settings.environment import NOT_A_CHOICE, env, env_choice, env_prices

# Lets admin and queryset classes be subscripted for type checking (ModelAdmin[Article]).
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent.parent

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", default="insecure-local-development-key-do-not-use-in-production")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# The site's own address (https://wiki.example.org), for links given outside a page: the MCP server's addresses.
SITE_URL = env("SITE_URL", default="").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "template_partials",
    "ninja",
    "csp",
    "axes",
    "garden",
    "verifier",
    "evaluation",
    "dashboard",
]

MIDDLEWARE = [
    "dashboard.server_timing.ServerTimingMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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
            ],
        },
    },
]

# Embedded PostgreSQL (pgserver) listens here when DATABASE_URL is not set; see config/services.py.
EMBEDDED_POSTGRES_PORT = env.int("EMBEDDED_POSTGRES_PORT", default=ports.EMBEDDED_POSTGRES_PORT)
DATABASES = {
    "default": env.db(
        "DATABASE_URL", default=f"postgres://postgres@127.0.0.1:{EMBEDDED_POSTGRES_PORT}/groundwork"
    ),
}
# Reconnect transparently after a PostgreSQL restart instead of failing the next request.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379/0")

# django-axes counts failed logins (pages and admin) before Django's own backend checks the password.
# Passwords go through verifier.identities.PasswordBackend (Django's ModelBackend, refusing every password when
# LOCAL_ACCOUNTS is off); it also answers permission checks for every account, signed in either way.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "verifier.identities.PasswordBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / ".run" / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]

# --- Celery -------------------------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=REDIS_URL)
CELERY_TASK_ACKS_LATE = True
# A task whose worker died is redelivered rather than dropped.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=120)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=150)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Unacknowledged tasks (their worker died) come back after this long; it must exceed the task time limit.
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=300),
    # Workers look for such tasks every 10 s (kombu's default looks only every 100 s).
    "unacked_restore_throttle": 1,
    # Publishing gives up at once on a broker that is away (kombu would retry for the connection timeout):
    # the answer stands and its verification waits (see below). Workers reconnect by their own schedule.
    "max_retries": 0,
    "socket_connect_timeout": 2,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_SERIALIZER = "json"
# How much lower than the web's the Celery worker's CPU priority is (`nice`, 0-19): on shared cores readers'
# questions are answered first, and the checks that follow wait for free time.
WORKER_NICENESS = env.int("WORKER_NICENESS", default=10)
# Verifications left waiting while Redis was away (or stuck with a lost task) are queued again by Celery beat:
# every VERIFIER_REQUEUE_EVERY_SECONDS, those pending for longer than VERIFIER_REQUEUE_AFTER_SECONDS.
VERIFIER_REQUEUE_EVERY_SECONDS = env.float("VERIFIER_REQUEUE_EVERY_SECONDS", default=60.0)
VERIFIER_REQUEUE_AFTER_SECONDS = env.float("VERIFIER_REQUEUE_AFTER_SECONDS", default=120.0)
CELERY_BEAT_SCHEDULE = {
    "requeue-pending-verifications": {
        "task": "verifier.tasks.requeue_pending_verifications",
        "schedule": VERIFIER_REQUEUE_EVERY_SECONDS,
    },
}
# A garden folder kept in sync: `make run` imports it at start, then Celery beat syncs it every so often.
GARDEN_PATH = env("GARDEN_PATH", default="")
GARDEN_SYNC_EVERY_SECONDS = env.float("GARDEN_SYNC_EVERY_SECONDS", default=300.0)
# A git repository as the garden (docs/gardens.md, "A git repository as a garden"): its branch's head is imported,
# then each sync fetches and imports what changed. Credentials go in the URL (https://TOKEN@host/...) or come from
# git's own means (GIT_ASKPASS, a credential helper, an SSH key); they never reach a log or an error message.
GARDEN_GIT_URL = env("GARDEN_GIT_URL", default="")
GARDEN_GIT_BRANCH = env("GARDEN_GIT_BRANCH", default="main")
# Where the clones are kept (a volume in production): a bare clone and the checked-out tree the import reads.
GARDEN_GIT_DIR = env("GARDEN_GIT_DIR", default=str(BASE_DIR / ".run" / "git"))
# A web page of a file at a commit, for article pages' links: https://github.com/me/notes/blob/{commit}/{path}
GARDEN_GIT_WEB_URL = env("GARDEN_GIT_WEB_URL", default="")
GARDEN_GIT_TIMEOUT_SECONDS = env.float("GARDEN_GIT_TIMEOUT_SECONDS", default=300.0)
# The audience a note naming none is for: everyone the site lets in. A note may name it (`audience: everyone`) to
# be for everyone inside a folder that a .gardenaccess rule gives to some audiences (docs/gardens.md, "Audiences").
GARDEN_DEFAULT_AUDIENCE = env("GARDEN_DEFAULT_AUDIENCE", default="everyone")
# The language of a note that names none (`lang:`) and whose words show none clearly: an ISO 639-1 code ("de") or
# a PostgreSQL text-search configuration ("german"); full-text search stems its passages in it (docs/gardens.md).
GARDEN_LANGUAGE = env("GARDEN_LANGUAGE", default="english")
# A larger note is skipped with its size, unread: one pasted log or dump must not hold up a sync (a note of
# prose this size is already hundreds of passages to embed).
GARDEN_NOTE_MAX_BYTES = env.int("GARDEN_NOTE_MAX_BYTES", default=2_000_000)
# PDFs over these caps are skipped unread, and counted (the operator chose not to import them); a PDF's size and
# page count are read before any of its pages. Scanned books and manuals run to hundreds of pages.
GARDEN_PDF_MAX_BYTES = env.int("GARDEN_PDF_MAX_BYTES", default=50_000_000)
GARDEN_PDF_MAX_PAGES = env.int("GARDEN_PDF_MAX_PAGES", default=1000)
# A PDF whose text takes longer to read fails: its reader (a child process) is stopped, so a crafted file cannot
# hold up a sync. A text PDF reads far faster than this (docs/performance.md has the figures).
GARDEN_PDF_MAX_SECONDS = env.float("GARDEN_PDF_MAX_SECONDS", default=60.0)
if GARDEN_PATH or GARDEN_GIT_URL:
    CELERY_BEAT_SCHEDULE["sync-garden"] = {
        "task": "garden.tasks.sync_garden",
        "schedule": GARDEN_SYNC_EVERY_SECONDS,
    }
CELERY_BEAT_SCHEDULE_FILENAME = env(
    "CELERY_BEAT_SCHEDULE_FILENAME", default=str(BASE_DIR / ".run" / "celerybeat-schedule")
)
CELERY_RESULT_EXPIRES = 3600

# --- Questions, retrieval and synthesis ----------------------------------------------------------
# What runs the embedding model: onnx-int8 (faster than torch, with torch's recall and refusals on the
# golden set; docs/performance.md has the figures), onnx (torch's vectors) or torch; or openai, a model served
# over the OpenAI API (OPENAI_BASE_URL) whose vectors never meet MiniLM's: switching to or from it needs
# `manage.py reembed_garden` (docs/settings.md). Between the local three, the next import embeds the garden again.
# The ONNX exports are cached in EMBEDDING_ONNX_CACHE.
EMBEDDING_BACKENDS = ("onnx-int8", "onnx", "torch", "openai")  # providers.embeddings.EmbeddingBackend
LOCAL_EMBEDDING_BACKENDS = EMBEDDING_BACKENDS[:3]
EMBEDDING_BACKEND = env_choice("EMBEDDING_BACKEND", "onnx-int8", EMBEDDING_BACKENDS)
# The served embedding model (EMBEDDING_BACKEND=openai) and the size of its vectors, which the vector column
# takes once the garden is switched over; MiniLM's 384 for the local backends, whatever this says.
OPENAI_EMBEDDING_MODEL = env("OPENAI_EMBEDDING_MODEL", default="")
EMBEDDING_DIMENSIONS = env.int("EMBEDDING_DIMENSIONS", default=384) if EMBEDDING_BACKEND == "openai" else 384
if EMBEDDING_BACKEND == "openai" and not OPENAI_EMBEDDING_MODEL:
    raise ImproperlyConfigured(
        "EMBEDDING_BACKEND=openai: set OPENAI_EMBEDDING_MODEL to the served embedding model's name."
    )
# pgvector's HNSW index takes vectors of at most 2,000 numbers.
if not 1 <= EMBEDDING_DIMENSIONS <= 2000:
    raise ImproperlyConfigured(f"EMBEDDING_DIMENSIONS is {EMBEDDING_DIMENSIONS}; it must be from 1 to 2000.")
EMBEDDING_ONNX_CACHE = env("EMBEDDING_ONNX_CACHE", default=str(BASE_DIR / ".run" / "onnx"))
# Size limits, each applied before any other work on what it limits.
QUESTION_MAX_CHARS = env.int("QUESTION_MAX_CHARS", default=2000)
# Turns one conversation may hold: each follow-up is retrieved and condensed with all the turns before it.
CONVERSATION_MAX_TURNS = env.int("CONVERSATION_MAX_TURNS", default=50)
CONVERSATION_TURNS_PER_PAGE = env.int("CONVERSATION_TURNS_PER_PAGE", default=10)  # each turn has its verdict
CHECK_MAX_CHARS = env.int("CHECK_MAX_CHARS", default=10_000)  # text sent to the fact-check (API)
REVIEW_NOTE_MAX_CHARS = env.int("REVIEW_NOTE_MAX_CHARS", default=2000)  # an editor's note on a claim
# Request bodies other than file uploads, refused before they are read. The largest legitimate one is an admin
# edit of a note's body, URL-encoded; the API's largest (CHECK_MAX_CHARS escaped as JSON) is far below it.
REQUEST_MAX_BYTES = env.int("REQUEST_MAX_BYTES", default=512 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_MAX_BYTES
# What one article page shows of the notes it embeds (`![[Note]]`), all together: a tenth of the largest note, so
# a page costs at most about its own note's size again; an embed past it is a link to the note.
EMBED_MAX_CHARS = env.int("EMBED_MAX_CHARS", default=200_000)
# Articles listed on one page of /articles/ and of a topic; the next ones are on the next page.
ARTICLES_PER_PAGE = env.int("ARTICLES_PER_PAGE", default=100)

# Calibrated on the golden set with `python manage.py retrieval_report --calibrate`; see docs/settings.md.
RETRIEVAL_VECTOR_THRESHOLD = env.float("RETRIEVAL_VECTOR_THRESHOLD", default=0.38)
RETRIEVAL_TEXT_THRESHOLD = env.float("RETRIEVAL_TEXT_THRESHOLD", default=0.90)
# Without a golden set the garden calibrates the gate on probes of itself (`retrieval_report --self-calibrate`):
# after an import that changed at least RETRIEVAL_PROBES_AFTER_SHARE of its notes (or its first), a sample of
# RETRIEVAL_PROBES_IN_SCOPE questions made from its titles and headings and RETRIEVAL_PROBES_OUT_OF_SCOPE shipped
# general-knowledge ones; the thresholds with the most probes right win (a probe refused counts as much as a
# probe answered), refusing no more than RETRIEVAL_PROBES_MISSED of the in-scope probes.
RETRIEVAL_PROBES_AFTER_IMPORT = env.bool("RETRIEVAL_PROBES_AFTER_IMPORT", default=True)
RETRIEVAL_PROBES_AFTER_SHARE = env.float("RETRIEVAL_PROBES_AFTER_SHARE", default=0.20)
RETRIEVAL_PROBES_IN_SCOPE = env.int("RETRIEVAL_PROBES_IN_SCOPE", default=150)
RETRIEVAL_PROBES_OUT_OF_SCOPE = env.int("RETRIEVAL_PROBES_OUT_OF_SCOPE", default=150)
RETRIEVAL_PROBES_MISSED = env.float("RETRIEVAL_PROBES_MISSED", default=0.05)
# ... and refusals beyond RETRIEVAL_PROBES_REFUSED of the out-of-scope probes count for nothing.
RETRIEVAL_PROBES_REFUSED = env.float("RETRIEVAL_PROBES_REFUSED", default=0.95)
RETRIEVAL_MAX_ARTICLES = env.int("RETRIEVAL_MAX_ARTICLES", default=5)
RETRIEVAL_MAX_SOURCES = env.int("RETRIEVAL_MAX_SOURCES", default=8)
# pgvector HNSW search breadth: higher is more exact and slower; it must also cover index entries of passages
# superseded but not yet vacuumed, which the partial index still returns and the query then drops.
# 200: at 100k real passages (make bench), recall@10 0.989 against the exact scan with the index's
# m 12 and ef_construction 800, p95 far below the NumPy scan's; 100 found 0.972, too close to 0.97.
RETRIEVAL_EF_SEARCH = env.int("RETRIEVAL_EF_SEARCH", default=200)
# A served re-ranker (optional; empty RERANK_URL: none): the endpoint itself, path included (Infinity's
# http://127.0.0.1:7997/rerank, vLLM's .../v1/rerank), spoken to in Cohere's shape. It reorders the top
# RERANK_CANDIDATES passages of a question the gate lets through; the gate itself never reads its scores.
RERANK_URL = env("RERANK_URL", default="")
RERANK_MODEL = env("RERANK_MODEL", default="")
RERANK_API_KEY = env("RERANK_API_KEY", default="")
# 20: more than the 8 sources synthesis gets (RETRIEVAL_MAX_SOURCES), so a passage the hybrid order put 9th to 20th
# can still become one; a CPU cross-encoder scores 20 short passages in well under a second.
RERANK_CANDIDATES = env.int("RERANK_CANDIDATES", default=20)
# Short: on every question's path, and a failure costs only the re-ranking (the hybrid order stays).
RERANK_TIMEOUT_SECONDS = env.float("RERANK_TIMEOUT_SECONDS", default=5.0)
if RERANK_URL and not RERANK_MODEL:
    raise ImproperlyConfigured("RERANK_URL is set: set RERANK_MODEL to the served re-ranker's name.")
if RERANK_URL and (RERANK_CANDIDATES < 2 or RERANK_TIMEOUT_SECONDS <= 0):
    raise ImproperlyConfigured("RERANK_CANDIDATES must be 2 or more and RERANK_TIMEOUT_SECONDS positive.")

# --- Anthropic (optional: without a key the local extractive synthesiser answers) ---------------
ANTHROPIC_API_KEY = env("ANTHROPIC_API_KEY", default="")
ANTHROPIC_BASE_URL = env("ANTHROPIC_BASE_URL", default=None)
CLAUDE_ANSWER_MODEL = env("CLAUDE_ANSWER_MODEL", default="claude-sonnet-5-5")
CLAUDE_JUROR_MODEL = env("CLAUDE_JUROR_MODEL", default="claude-haiku-5-5")
CLAUDE_TIEBREAKER_MODEL = env("CLAUDE_TIEBREAKER_MODEL", default="claude-opus-5-5")
CLAUDE_TIMEOUT_SECONDS = env.float("CLAUDE_TIMEOUT_SECONDS", default=30.0)
CLAUDE_MAX_RETRIES = env.int("CLAUDE_MAX_RETRIES", default=2)
CLAUDE_ANSWER_MAX_TOKENS = env.int("CLAUDE_ANSWER_MAX_TOKENS", default=700)
# The model that rewrites a follow-up as a standalone question to search for: a short task, the juror's model.
CLAUDE_CONDENSE_MODEL = env("CLAUDE_CONDENSE_MODEL", default="claude-haiku-5-5")

# --- The model that writes answers --------------------------------------------------------------
# claude: Claude when ANTHROPIC_API_KEY is set, else the local synthesiser (the default, as before); openai: a model
# served over the OpenAI API (OPENAI_*); local: the local extractive synthesiser, whatever keys are set.
ANSWER_PROVIDERS = ("claude", "openai", "local")
ANSWER_PROVIDER = env_choice("ANSWER_PROVIDER", "claude", ANSWER_PROVIDERS)
# The OpenAI SDK's own names: the endpoint (Ollama's is http://127.0.0.1:11434/v1) and its key (local servers want
# none; empty sends a placeholder).
OPENAI_BASE_URL = env("OPENAI_BASE_URL", default="")
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
OPENAI_ANSWER_MODEL = env("OPENAI_ANSWER_MODEL", default="")
OPENAI_CONDENSE_MODEL = env("OPENAI_CONDENSE_MODEL", default="") or OPENAI_ANSWER_MODEL
# A juror served the same way, voting after the local judge (empty: none).
OPENAI_JUROR_MODEL = env("OPENAI_JUROR_MODEL", default="")
# Local models are slower than Claude: a long answer from a small server can take a minute.
OPENAI_TIMEOUT_SECONDS = env.float("OPENAI_TIMEOUT_SECONDS", default=60.0)
OPENAI_MAX_RETRIES = env.int("OPENAI_MAX_RETRIES", default=2)
# USD per million input/output tokens by model-name prefix ("gpt-4.1-mini=0.4/1.6,gpt-4.1=2/8"); a model no
# prefix names costs nothing, as a team's own server does.
OPENAI_PRICES = env_prices("OPENAI_PRICES")
if ANSWER_PROVIDER == "openai" and not OPENAI_ANSWER_MODEL:
    raise ImproperlyConfigured("ANSWER_PROVIDER=openai: set OPENAI_ANSWER_MODEL to the served model's name.")
if (ANSWER_PROVIDER == "openai" or OPENAI_JUROR_MODEL or EMBEDDING_BACKEND == "openai") and not (
    OPENAI_BASE_URL or OPENAI_API_KEY
):
    raise ImproperlyConfigured(
        "A served model is configured: set OPENAI_BASE_URL to its server (or OPENAI_API_KEY for OpenAI's own)."
    )

# Threads of one web process that may wait on Claude at once (asks, readers' fact-checks); one more is told
# Claude is busy (503). Half of gunicorn's 8 threads: the other four keep serving pages and verdict polls, as many
# as a process had in all before (docs/performance.md, "Claude calls and web threads").
WEB_CLAUDE_SLOTS = env.int("WEB_CLAUDE_SLOTS", default=4)
# Seconds a streamed answer may take before Claude is stopped and its slot given back: about four times what the
# longest answer (CLAUDE_ANSWER_MAX_TOKENS) takes at Claude's usual pace, so only a stream that stalls or trickles reaches it.
STREAM_MAX_SECONDS = env.float("STREAM_MAX_SECONDS", default=90.0)

# --- The claim judge --------------------------------------------------------------------------
# local: the offline judge only; claude: the Claude juror (the tie-breaker for claims it is unsure of);
# cascade: local and Claude jurors, the Claude tie-breaker where they disagree or are unsure.
VERIFIER_MODES = tuple(mode.value for mode in JudgeMode)
VERIFIER_MODE = env_choice("VERIFIER_MODE", JudgeMode.CASCADE.value, VERIFIER_MODES)
# What Claude may cost a day (USD), answers and judgements together: a call is made only when what is left covers
# the most it can cost; otherwise answers are written by the local synthesiser and the panel runs local-only.
VERIFIER_DAILY_BUDGET_USD = env.float("VERIFIER_DAILY_BUDGET_USD", default=5.0)
# Where the garden books Claude's answers: the verifier's ledger, handed over here because garden never imports
# verifier (a function returning a `providers.claude.Budget`; empty: answers have no limit).
ANSWER_BUDGET = "verifier.budget.answer_budget"
# Which sentence answers a question, as the local synthesiser asks before it answers (none: it abstains): the
# engine's local judge on what the question takes as given. Wired here, so the garden imports no engine.
ANSWERING_SENTENCE = "claimcheck.answerability.answering"
# The same for the call that condenses a follow-up into a standalone question (booked under its own purpose).
CONDENSE_BUDGET = "verifier.budget.condense_budget"
# A claim where a juror is less sure than this goes to the tie-breaker.
VERIFIER_ESCALATE_BELOW = env.float("VERIFIER_ESCALATE_BELOW", default=0.6)
# Earlier passages of the cited articles the judges also read, to tell an outdated claim: as many as an answer
# cites at most (RETRIEVAL_MAX_SOURCES), one earlier wording a cited passage, however often its note was edited.
VERIFIER_EARLIER_PASSAGES = env.int("VERIFIER_EARLIER_PASSAGES", default=8)
# An answer whose delta score exceeds this logs an operator alert.
VERIFIER_ALERT_DELTA = env.float("VERIFIER_ALERT_DELTA", default=0.5)
# The benchmarks a retraining of the local judge fits on and checks against, and where their features are cached.
JUDGE_EVAL_DIR = env("JUDGE_EVAL_DIR", default=str(BASE_DIR.parent / "shared" / "eval"))
JUDGE_CALIBRATION_CACHE = env("JUDGE_CALIBRATION_CACHE", default=str(BASE_DIR / ".run" / "calibration"))

# What runs the judge's MiniLM (torch, onnx, onnx-int8: see EMBEDDING_BACKEND). Its features and params.json
# were fitted on torch's embeddings; another backend changes them (make eval measures by how much).
JUDGE_EMBEDDING_BACKEND = env_choice("JUDGE_EMBEDDING_BACKEND", "torch", LOCAL_EMBEDDING_BACKENDS)

# Critic checks (fixed severities). `path:line - description` citations are audited against this folder, a
# source tree the operator names (its hidden files are never read); empty: such citations are not checked and
# are dropped, so no file of the server is read for them. One that is, lies inside or holds a garden is refused
# as if empty (verifier.source_tree): the gate tells anyone who checks a text what is on a file's lines.
CRITIC_SOURCE_TREE = env("CRITIC_SOURCE_TREE", default="")
CRITIC_MIN_CITATIONS = env.int("CRITIC_MIN_CITATIONS", default=1)
CRITIC_MAX_CHARS = env.int("CRITIC_MAX_CHARS", default=3000)
CRITIC_MIN_CHARS = env.int("CRITIC_MIN_CHARS", default=0)  # 0: no lower limit
CRITIC_FORBIDDEN_PHRASES = env.list("CRITIC_FORBIDDEN_PHRASES", default=[])

# Log lines and error reports have every configured secret replaced (see config/scrubbing.py).
DEFAULT_EXCEPTION_REPORTER = "config.scrubbing.ScrubbingExceptionReporter"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {
            "()": "config.scrubbing.ScrubbingFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s: %(message)s",
        }
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {
        "handlers": ["console"],
        "level": env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")),
    },
    "loggers": {"httpx": {"level": "WARNING"}, "sentence_transformers": {"level": "WARNING"}},
}

# --- Rate limits (asking and fact-checking), counted in Redis -------------------------------------------
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env("CACHE_URL", default=REDIS_URL.rsplit("/", 1)[0] + "/1"),
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    },
    # django-ratelimit counts in the shared cache, or in each process's memory while that errors (never open).
    "ratelimit": {"BACKEND": "dashboard.ratelimit.FailoverCache", "LOCATION": "default"},
}
RATELIMIT_USE_CACHE = "ratelimit"
RATE_LIMIT_PER_IP = env.int("RATE_LIMIT_PER_IP", default=30)  # requests per minute from one address
RATE_LIMIT_PER_USER = env.int("RATE_LIMIT_PER_USER", default=20)  # requests per minute from one account
# Claim reports one client address may make a day, whoever sends them: each joins the editors' review queue.
REPORTS_PER_ADDRESS_PER_DAY = env.int("REPORTS_PER_ADDRESS_PER_DAY", default=100)
# Requests per minute through one personal API token (instead of its address; its account's limit holds too).
RATE_LIMIT_PER_TOKEN = env.int("RATE_LIMIT_PER_TOKEN", default=20)
# Days a new personal API token works for: a token copied somewhere and forgotten stops working by itself.
API_TOKEN_DAYS = env.int("API_TOKEN_DAYS", default=90)
# Days a member who signs in at the OIDC provider keeps using tokens after their last sign-in there: their groups
# (audiences, roles) are read only at sign-in, so a group taken away at the provider counts within this. 0: off.
API_TOKEN_SIGN_IN_DAYS = env.int("API_TOKEN_SIGN_IN_DAYS", default=7)
# How many reverse proxies of ours stand in front of the site: 0 counts REMOTE_ADDR; N counts the N-th
# X-Forwarded-For entry from the right (the address our outermost proxy saw; entries left of it are the client's).
RATE_LIMIT_TRUSTED_PROXIES = env.int("RATE_LIMIT_TRUSTED_PROXIES", default=0)

# --- Content-Security-Policy (django-csp) and login throttling (django-axes) ------------------------------------
# Every page loads scripts, styles, images and fonts from this site only, and runs no inline script or style:
# htmx and the pages need none (htmx's own indicator style is off; static/css has it).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
# After this many failed logins for one username from one address, that pair is locked out for a while.
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = datetime.timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
# Username with address: a stranger cannot lock a reader out from elsewhere by guessing their name.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = (
    "dashboard.ratelimit.client_address"  # the address rate limits count (trusted proxies)
)
AXES_LOCKOUT_CALLABLE = "dashboard.views.accounts.locked_out"

# --- Mail and password reset ------------------------------------------------------------------
# Where mail goes (django-environ's EMAIL_URL, e.g. smtp+tls://user:password@mail.example.org:587). Without it
# the site sends no mail, and the password reset page says it is off rather than trying: its link would reach
# nobody (or only the server's log). Operators set a password with `manage.py changepassword USERNAME`.
EMAIL_URL = env("EMAIL_URL", default="")
if EMAIL_URL:
    globals().update(env.email_url_config(EMAIL_URL))  # EMAIL_BACKEND, EMAIL_HOST, EMAIL_PORT, ...
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="groundwork@localhost")
PASSWORD_RESET_BY_MAIL = bool(EMAIL_URL)

# --- Roles ---------------------------------------------------------------------------------------
# Whether visitors who are not logged in may ask questions.
ANONYMOUS_CAN_ASK = env.bool("ANONYMOUS_CAN_ASK", default=True)
# What their questions may cost in Claude a day (USD), answers and their checks together, out of
# VERIFIER_DAILY_BUDGET_USD; the rest is kept for signed-in readers. 0: their answers are written and judged
# locally, and no Claude call is made for them (strangers cannot spend the team's budget).
ANONYMOUS_CLAUDE_DAILY_USD = env.float("ANONYMOUS_CLAUDE_DAILY_USD", default=0.0)
# Whether they may fact-check text (POST /api/check); when on, their checks use the local judge only, so they
# cannot spend the Claude budget.
ANONYMOUS_CAN_CHECK = env.bool("ANONYMOUS_CAN_CHECK", default=False)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:ask"
LOGOUT_REDIRECT_URL = "dashboard:ask"

# --- Sign-in with the team's account (OpenID Connect) ---------------------------------------------------------
# Off while OIDC_ISSUER is empty. The issuer's /.well-known/openid-configuration gives every endpoint and its keys.
OIDC_ISSUER = env("OIDC_ISSUER", default="").rstrip("/")
OIDC_CLIENT_ID = env("OIDC_CLIENT_ID", default="")
OIDC_CLIENT_SECRET = env("OIDC_CLIENT_SECRET", default="")
OIDC_SCOPES = env.list("OIDC_SCOPES", default=["openid", "profile", "email"])
OIDC_PROVIDER_NAME = env(
    "OIDC_PROVIDER_NAME", default="your team's account"
)  # the button reads "Sign in with ..."
OIDC_GROUPS_CLAIM = env(
    "OIDC_GROUPS_CLAIM", default="groups"
)  # the ID token claim that lists the user's groups
# The provider's groups to audiences (`hr-team=hr,board-members=board`) and to roles (`garden-editors=editor`).
OIDC_GROUP_AUDIENCES = env.dict("OIDC_GROUP_AUDIENCES", default={})
OIDC_GROUP_ROLES = env.dict("OIDC_GROUP_ROLES", default={})
# The role of everyone who signs in there, whatever their groups (empty: only the roles OIDC_GROUP_ROLES gives).
OIDC_DEFAULT_ROLE = env("OIDC_DEFAULT_ROLE", default="reader")
# How long the site waits for the provider (discovery, keys, the token exchange) before saying it is down.
OIDC_TIMEOUT_SECONDS = env.float("OIDC_TIMEOUT_SECONDS", default=10.0)
# Usernames and passwords kept here. Off (with OIDC_ISSUER set): no password form, every password refused.
LOCAL_ACCOUNTS = env.bool("LOCAL_ACCOUNTS", default=True)
if OIDC_ISSUER and not (OIDC_CLIENT_ID and OIDC_CLIENT_SECRET):
    raise ImproperlyConfigured("OIDC_ISSUER is set: set OIDC_CLIENT_ID and OIDC_CLIENT_SECRET too.")
if not OIDC_ISSUER and not LOCAL_ACCOUNTS:
    raise ImproperlyConfigured("LOCAL_ACCOUNTS is off and OIDC_ISSUER is empty: nobody could sign in.")
_ROLES = ("reader", "editor", "operator")  # verifier.roles.ROLES (settings import no app)
for _group, _role in {**OIDC_GROUP_ROLES, "OIDC_DEFAULT_ROLE": OIDC_DEFAULT_ROLE or "reader"}.items():
    if _role not in _ROLES:
        raise ImproperlyConfigured(
            NOT_A_CHOICE.format(name=f"OIDC_GROUP_ROLES[{_group}]", value=_role, choices=", ".join(_ROLES))
        )
if OIDC_ISSUER:
    # Signing out (a form posted here) ends in a redirect to the provider's end-session page, which browsers
    # check against form-action.
    _issuer = urllib.parse.urlsplit(OIDC_ISSUER)
    CONTENT_SECURITY_POLICY["DIRECTIVES"]["form-action"].append(f"{_issuer.scheme}://{_issuer.netloc}")
