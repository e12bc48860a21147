"""Settings for the test suite: the real PostgreSQL and Redis, a fast password hasher."""

from config.settings.base import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests must never reach a real Anthropic endpoint; tests that need Claude start a local fake server, and hand
# its address to the processes they start (a worker, gunicorn) in GROUNDWORK_TEST_FAKE_CLAUDE_URL.
ANTHROPIC_BASE_URL = env("GROUNDWORK_TEST_FAKE_CLAUDE_URL", default=None)  # noqa: F405
if ANTHROPIC_BASE_URL and not ANTHROPIC_BASE_URL.startswith("http://127.0.0.1:"):
    raise ValueError(
        "GROUNDWORK_TEST_FAKE_CLAUDE_URL must be a local fake Messages API (http://127.0.0.1:PORT)"
    )
ANTHROPIC_API_KEY = "sk-ant-test-not-a-real-key-0000" if ANTHROPIC_BASE_URL else ""
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# A Redis database of its own, so a test worker never takes tasks from (or gives them to) a `make run` worker.
CELERY_BROKER_URL = CELERY_RESULT_BACKEND = REDIS_URL.rsplit("/", 1)[0] + "/15"  # noqa: F405
VERIFIER_MODE = "cascade"
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL.rsplit("/", 1)[0] + "/14",  # noqa: F405
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    },
    "ratelimit": {"BACKEND": "dashboard.ratelimit.FailoverCache", "LOCATION": "default"},
}
# High enough for the suite; the rate-limit tests lower them.
RATE_LIMIT_PER_IP = 10_000
RATE_LIMIT_PER_USER = 10_000
# The browser tests serve the site with gunicorn; let it serve static files without collectstatic.
WHITENOISE_USE_FINDERS = True
