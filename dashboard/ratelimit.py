"""Rate limits on asking and fact-checking, per user and per IP address, in fixed one-minute windows.

Counts live in the shared cache (Redis), so every web process sees the same numbers. If the cache is down the
limit fails open: readers keep getting answers, and the failure is logged.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

logger = logging.getLogger(__name__)

RATE_LIMITED = "Too many requests: please wait a minute before asking again."
WINDOW_SECONDS = 60


def client_ip(request: HttpRequest) -> str:
    if settings.RATE_LIMIT_TRUST_FORWARDED_FOR:
        forwarded = request.headers.get("X-Forwarded-For", "")
        if forwarded:
            return forwarded.split(",")[0].strip()
    return str(request.META.get("REMOTE_ADDR", "unknown"))


def _over(key: str, limit: int) -> bool:
    window = int(time.time() // WINDOW_SECONDS)
    name = f"ratelimit:{key}:{window}"
    cache.add(name, 0, timeout=WINDOW_SECONDS * 2)
    return cache.incr(name) > limit


def rate_limited(request: HttpRequest, scope: str) -> bool:
    """Count this request against its IP (and user, when logged in); True when either is over its limit."""
    try:
        over_ip = _over(f"{scope}:ip:{client_ip(request)}", settings.RATE_LIMIT_PER_IP)
        over_user = request.user.is_authenticated and _over(
            f"{scope}:user:{request.user.pk}", settings.RATE_LIMIT_PER_USER
        )
    except Exception:
        logger.warning("rate limit check failed; letting the request through", exc_info=True)
        return False
    return bool(over_ip or over_user)


def retry_after() -> str:
    """Seconds until the current window ends, for the Retry-After header."""
    return str(WINDOW_SECONDS - int(time.time()) % WINDOW_SECONDS)
