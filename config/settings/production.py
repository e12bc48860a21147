"""Production settings: refuse to start without a real SECRET_KEY or with DEBUG on; strict security headers."""

import os

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.environment import env

if not os.environ.get("SECRET_KEY"):
    raise ImproperlyConfigured("SECRET_KEY must be set in the environment for production.")
if env.bool("DEBUG", default=False):
    raise ImproperlyConfigured("DEBUG must be off in production.")

DEBUG = False
SECRET_KEY = env("SECRET_KEY")

# The header our TLS-terminating proxy sets to "https" (e.g. X-Forwarded-Proto); it must also drop that header
# from clients. Unset: no header is trusted, since anyone reaching gunicorn directly could send it.
PROXY_SSL_HEADER = env("PROXY_SSL_HEADER", default="")
if PROXY_SSL_HEADER:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + PROXY_SSL_HEADER.upper().replace("-", "_"), "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
X_FRAME_OPTIONS = "DENY"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
