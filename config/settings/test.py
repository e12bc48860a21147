"""Settings for the test suite: the real PostgreSQL and Redis, a fast password hasher."""

from config.settings.base import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests must never reach a real Anthropic endpoint; tests that need Claude start a local fake server.
ANTHROPIC_API_KEY = ""
ANTHROPIC_BASE_URL = None
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# A Redis database of its own, so a test worker never takes tasks from (or gives them to) a `make run` worker.
CELERY_BROKER_URL = CELERY_RESULT_BACKEND = REDIS_URL.rsplit("/", 1)[0] + "/15"  # noqa: F405
VERIFIER_MODE = "cascade"
