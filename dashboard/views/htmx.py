import datetime

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme
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


def safe_next(request: HttpRequest, url: str | None, *, default: str) -> str:
    """`url` when it is on this site (a page to go back to), else `default`: a form's `next` must never send a
    reader to another site."""
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return default
