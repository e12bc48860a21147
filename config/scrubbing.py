"""Secrets never leave the process in a log line or an error report.

Django's own filter hides settings named like secrets and variables marked with `sensitive_variables`, but not
a key held in a local variable of library code (the Anthropic SDK builds its auth headers in a plain dict) or
quoted in an exception message (an API error echoing the key). Here the configured secrets are replaced
wherever they appear in the finished text, and so are the credentials no setting knows: whatever follows
`Bearer` (an Authorization header, as a request logged with its headers shows it) and anything shaped like a
personal API token (`gw_` and its random characters, `verifier.tokens`).
"""

from __future__ import annotations

import html
import logging
import re
from typing import Any

from django.conf import settings
from django.utils.safestring import SafeString, mark_safe
from django.views.debug import ExceptionReporter

REPLACEMENT = "********************"
MIN_SECRET_LENGTH = 8  # shorter values (an empty or toy setting) would blank out ordinary text


def secrets() -> list[str]:
    """The configured secret values: SECRET_KEY (and its fallbacks), the Anthropic and OpenAI API keys, the DB and
    mail passwords."""
    if not settings.configured:
        return []
    values = [
        settings.SECRET_KEY,
        *getattr(settings, "SECRET_KEY_FALLBACKS", []),
        getattr(settings, "ANTHROPIC_API_KEY", ""),
        getattr(settings, "OPENAI_API_KEY", ""),
        settings.DATABASES.get("default", {}).get("PASSWORD", ""),
        getattr(settings, "EMAIL_HOST_PASSWORD", ""),
    ]
    found = {str(v) for v in values if v and len(str(v)) >= MIN_SECRET_LENGTH}
    found |= {html.escape(v) for v in found}  # as an HTML page would show it
    return sorted(found, key=len, reverse=True)


# The credential after "Bearer" (an HTTP token68: "Bearer gw_…", "Bearer sk-…", never "bearer of");
# a personal API token wherever it stands, 20 characters of it being more than any word of prose.
BEARER = re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}")
PERSONAL_TOKEN = re.compile(r"gw_[A-Za-z0-9_-]{20,}")


def scrub(text: str) -> str:
    for secret in secrets():
        text = text.replace(secret, REPLACEMENT)
    text = BEARER.sub(lambda found: found.group(1) + REPLACEMENT, text)
    return PERSONAL_TOKEN.sub(REPLACEMENT, text)


class ScrubbingFormatter(logging.Formatter):
    """A log formatter whose output (message, arguments and traceback) never holds a configured secret; given
    `inner`, it keeps that formatter's format (for handlers set up by others, such as Celery's)."""

    def __init__(self, *args: Any, inner: logging.Formatter | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        return scrub(self.inner.format(record) if self.inner else super().format(record))


def scrub_handlers(logger: logging.Logger) -> None:
    """Make every handler of `logger` scrub secrets, keeping its format."""
    for handler in logger.handlers:
        if not isinstance(handler.formatter, ScrubbingFormatter):
            handler.setFormatter(ScrubbingFormatter(inner=handler.formatter or logging.Formatter()))


class ScrubbingExceptionReporter(ExceptionReporter):
    """Error reports (the admins' e-mail, the debug page) with every configured secret replaced."""

    # Replacing a secret by asterisks keeps safe HTML safe.
    def get_traceback_html(self) -> SafeString:
        return mark_safe(scrub(super().get_traceback_html()))

    def get_traceback_text(self) -> SafeString:
        return mark_safe(scrub(super().get_traceback_text()))
