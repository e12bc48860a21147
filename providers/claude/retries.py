"""Retries: the SDK's own, and a middleware that gives up when the server asks to wait too long.

The SDK retries connection errors, timeouts, 408, 409, 429 and 5xx (529 included) up to `max_retries` times.
Between attempts it waits what the server asked for (`retry-after-ms`, else `retry-after` in seconds or as an
HTTP date) and otherwise backs off exponentially (0.5 s, 1 s, 2 s ... capped at 8 s, minus up to 25 % jitter;
a `retry-after` of 0 also means backoff). The SDK puts no upper bound on a server-requested wait, so
`RetryWaitLimit` raises `ServerWaitTooLong` at once when the server asks for more than
`max_retry_wait_seconds`.
"""

from __future__ import annotations

import email.utils
import time
from typing import TYPE_CHECKING, Any

import anthropic

if TYPE_CHECKING:
    import httpx2


class ServerWaitTooLong(Exception):
    """The server asked to wait longer than allowed before the SDK's next retry."""

    def __init__(self, status_code: int, wait_seconds: float, body: str, request_id: str | None) -> None:
        super().__init__(status_code, wait_seconds)
        self.status_code = status_code
        self.wait_seconds = wait_seconds
        self.body = body
        self.request_id = request_id


class RetryWaitLimit(anthropic.Middleware):
    """Gives up instead of letting the SDK sleep longer than `limit_seconds` before a retry."""

    def __init__(self, max_retries: int, limit_seconds: float) -> None:
        self._max_retries = max_retries
        self._limit_seconds = limit_seconds

    def handle(
        self, request: anthropic.APIRequest, call_next: anthropic.CallNext
    ) -> anthropic.APIResponse[Any]:
        response = call_next(request)
        if request.retries_taken >= self._max_retries or not _sdk_would_retry(response.http_response):
            return response
        wait_seconds = _retry_after_seconds(response.headers)
        if wait_seconds is None or wait_seconds <= self._limit_seconds:
            return response
        http_response = response.http_response
        try:
            body = http_response.read().decode("utf-8", "replace")
        finally:
            http_response.close()
        raise ServerWaitTooLong(
            http_response.status_code, wait_seconds, body, http_response.headers.get("request-id")
        )


def _sdk_would_retry(response: httpx2.Response) -> bool:
    # Mirrors the SDK's status policy (anthropic 2.x `_should_retry`), including the x-should-retry override.
    should_retry = response.headers.get("x-should-retry")
    if should_retry in ("true", "false"):
        return should_retry == "true"
    return response.status_code in (408, 409, 429) or response.status_code >= 500


def _retry_after_seconds(headers: httpx2.Headers) -> float | None:
    # Read the way the SDK reads it: retry-after-ms, then retry-after as seconds, then as an HTTP date.
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            pass
    raw = headers.get("retry-after")
    parsed = email.utils.parsedate_tz(raw) if raw else None
    return None if parsed is None else float(email.utils.mktime_tz(parsed) - time.time())
