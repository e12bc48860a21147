"""The test provider's settings: nothing of Groundwork's, a SQLite file named by OIDC_TEST_ISSUER_DB."""

import os

SECRET_KEY = "test-issuer-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
SITE_URL = os.environ["OIDC_TEST_ISSUER_URL"]  # tokens' issuer: SITE_URL + /openid
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "oidc_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "tests.oidc_issuer.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [os.path.join(os.path.dirname(__file__), "templates")],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["OIDC_TEST_ISSUER_DB"]}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Two sites on 127.0.0.1 (different ports) share cookies by name: keep this one's apart from Groundwork's.
SESSION_COOKIE_NAME = "issuer_sessionid"
CSRF_COOKIE_NAME = "issuer_csrftoken"
LOGIN_URL = "/accounts/login/"
USE_TZ = True
# The user's Django groups as the `groups` claim of the ID token, as a team's provider sends them.
OIDC_IDTOKEN_PROCESSING_HOOK = "tests.oidc_issuer.hooks.groups_claim"
OIDC_IDTOKEN_INCLUDE_CLAIMS = True
