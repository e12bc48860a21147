"""The `Server-Timing` header on every response: where the request's time went (see providers/timing.py)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from providers.timing import recording


class ServerTimingMiddleware:
    """Records each request's phases and sends them in `Server-Timing` (read by `make load` and browsers'
    developer tools). Placed first, so `total` covers the whole of Django's work on the request."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with recording() as timings:
            response = self.get_response(request)
        response["Server-Timing"] = timings.header()
        return response
