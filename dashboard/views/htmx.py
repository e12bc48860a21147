import datetime

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """A request that went through HtmxMiddleware (for type checking)."""

    htmx: HtmxDetails


def query_date(value: str | None) -> datetime.date | None:
    """A `YYYY-MM-DD` query parameter as a date; None when absent or malformed."""
    try:
        return datetime.date.fromisoformat(value) if value else None
    except ValueError:
        return None
