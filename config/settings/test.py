"""Settings for the test suite: the real PostgreSQL and Redis, a fast password hasher."""

from config.settings.base import *  # noqa: F403
from config.settings.base import EMBEDDING_BACKEND as _SHELL_BACKEND
from config.settings.environment import env

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests must never reach a real Anthropic endpoint; tests that need Claude start a local fake server, and hand
# its address to the processes they start (a worker, gunicorn) in GROUNDWORK_TEST_FAKE_CLAUDE_URL.
ANTHROPIC_BASE_URL = env("GROUNDWORK_TEST_FAKE_CLAUDE_URL", default=None)
if ANTHROPIC_BASE_URL and not ANTHROPIC_BASE_URL.startswith("http://127.0.0.1:"):
    raise ValueError(
        "GROUNDWORK_TEST_FAKE_CLAUDE_URL must be a local fake Messages API (http://127.0.0.1:PORT)"
    )
ANTHROPIC_API_KEY = "sk-ant-test-not-a-real-key-0000" if ANTHROPIC_BASE_URL else ""
# Nor a served model a developer's shell names: tests that need one point it at the local fake chat API.
ANSWER_PROVIDER = "claude"
OPENAI_BASE_URL = OPENAI_API_KEY = OPENAI_ANSWER_MODEL = OPENAI_CONDENSE_MODEL = OPENAI_JUROR_MODEL = ""
OPENAI_EMBEDDING_MODEL = ""
if _SHELL_BACKEND == "openai":
    EMBEDDING_BACKEND, EMBEDDING_DIMENSIONS = "onnx-int8", 384
OPENAI_PRICES = {}
RERANK_URL = RERANK_MODEL = RERANK_API_KEY = ""
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Redis databases of its own, so a test worker never takes tasks from (or gives them to) a `make run` worker:
# three for each pytest-xdist worker (gw0, gw1, ...), counting down from 15, so that parallel test processes and
# their Celery workers never share a queue, a cache or a scratch database (`make run` keeps 0 and 1).
_XDIST_WORKER = int(env("PYTEST_XDIST_WORKER", default="gw0").removeprefix("gw") or 0)
_REDIS = REDIS_URL.rsplit("/", 1)[0]  # noqa: F405
if _XDIST_WORKER > 3:
    raise ValueError("the test settings give Redis databases to four pytest-xdist workers at most (-n 4)")
CELERY_BROKER_URL = CELERY_RESULT_BACKEND = f"{_REDIS}/{15 - 3 * _XDIST_WORKER}"
TEST_REDIS_SCRATCH_URL = f"{_REDIS}/{13 - 3 * _XDIST_WORKER}"  # a test's own broker, flushed as it likes
VERIFIER_MODE = "cascade"
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"{_REDIS}/{14 - 3 * _XDIST_WORKER}",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    },
    "ratelimit": {"BACKEND": "dashboard.ratelimit.FailoverCache", "LOCATION": "default"},
}
# High enough for the suite; the rate-limit tests lower them.
RATE_LIMIT_PER_IP = 10_000
RATE_LIMIT_PER_USER = 10_000
RATE_LIMIT_PER_TOKEN = 10_000
# The browser tests serve the site with gunicorn; let it serve static files without collectstatic.
WHITENOISE_USE_FINDERS = True
# The sample garden's import would queue a self-calibration that a test's worker could run into other tests.
RETRIEVAL_PROBES_AFTER_IMPORT = False
