"""Rate limits on asking and fact-checking, per user and per client address, per minute (django-ratelimit); a
call made with a personal API token per token and per user instead, wherever it comes from.

Counts live in the shared cache (Redis), so every web process sees the same numbers. When that cache errors, each
process counts in its own memory instead (`FailoverCache`): the limit then holds per process rather than letting
everything through, and the failure is logged.

The client address is REMOTE_ADDR, or behind RATE_LIMIT_TRUSTED_PROXIES reverse proxies the address the outermost
of them saw: each proxy appends the address it was reached from to X-Forwarded-For, so that one is the N-th entry
from the right, and whatever a client wrote to the left of it cannot change the key.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from dashboard.bearer import request_token

logger = logging.getLogger(__name__)

RATE_LIMITED = "Too many requests: please wait a minute before asking again."
MARK_RATE_LIMITED = "Too many marks: please wait a minute before marking again. Nothing was recorded."
REPORTS_DAY_SPENT = (
    "This address has reported the most claims it may today ({limit}): please report again tomorrow. "
    "Nothing was recorded."
)
# After the shared cache errors, counts stay in memory this long before it is tried again, so a cache that is
# away costs each request nothing rather than a connection timeout.
SHARED_RETRY_SECONDS = 30.0
# IPv6 clients usually hold a whole /64: count it as one address, as django-ratelimit does by default.
IPV6_PREFIX = 64


def client_ip(request: HttpRequest) -> str:
    """The address a request counts against: REMOTE_ADDR, or the one the outermost trusted proxy saw."""
    remote = str(request.META.get("REMOTE_ADDR") or "unknown")
    proxies = settings.RATE_LIMIT_TRUSTED_PROXIES
    if proxies > 0:
        forwarded = [part.strip() for part in request.headers.get("X-Forwarded-For", "").split(",")]
        forwarded = [part for part in forwarded if part]
        # Fewer entries than proxies: the request did not come the whole way through them; the address that
        # reached us is the only one we know.
        if len(forwarded) >= proxies:
            remote = forwarded[-proxies]
    try:
        address = ipaddress.ip_address(remote)
    except ValueError:
        return remote[:100]
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/{IPV6_PREFIX}", strict=False).network_address)
    return str(address)


def client_address(request: HttpRequest) -> str | None:
    """`client_ip` when it is an IP address, else None (e.g. a request built by hand, with no REMOTE_ADDR):
    what django-axes records against failed logins (AXES_CLIENT_IP_CALLABLE)."""
    ip = client_ip(request)
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        return None
    return ip


def _ip_key(group: str, request: HttpRequest) -> str:
    return client_ip(request)


def _user_key(group: str, request: HttpRequest) -> str:
    return str(request.user.pk)


def _token_key(group: str, request: HttpRequest) -> str:
    token = request_token(request)
    return str(token.pk if token else "")


def rate_limited(request: HttpRequest, scope: str) -> int | None:
    """Count this request against its address (and its user, when logged in) for `scope` ("ask", "check"), or,
    made with a personal token, against the token (and its user): a script's calls from a shared address do not
    use up its neighbours' limit, nor theirs its own. When any count is over its per-minute limit, the seconds
    until the window ends (for Retry-After), else None."""
    if request_token(request) is not None:
        counts = [("token", _token_key, settings.RATE_LIMIT_PER_TOKEN)]
    else:
        counts = [("ip", _ip_key, settings.RATE_LIMIT_PER_IP)]
    if request.user.is_authenticated:
        counts.append(("user", _user_key, settings.RATE_LIMIT_PER_USER))
    waits = []
    for name, key, limit in counts:
        usage = get_usage(request, group=f"{scope}:{name}", key=key, rate=f"{limit}/m", increment=True)
        if usage is not None and usage["should_limit"]:
            waits.append(max(1, int(usage["time_left"])))
    return max(waits) if waits else None


def reports_limited(request: HttpRequest) -> int | None:
    """Count a claim report against its client address for the day (REPORTS_PER_ADDRESS_PER_DAY), however it
    is sent: a visitor's new browser session is a new reader to the marks, never a new address, so one address
    fills the editors' queue no faster than that. The seconds until the day's window ends when it is over, else
    None."""
    limit = settings.REPORTS_PER_ADDRESS_PER_DAY
    usage = get_usage(request, group="report:ip", key=_ip_key, rate=f"{limit}/d", increment=True)
    if usage is not None and usage["should_limit"]:
        return max(1, int(usage["time_left"]))
    return None


# When the shared cache last failed, for every thread of this process (Django makes a cache object per thread).
_shared_down_until = 0.0


class FailoverCache(BaseCache):
    """The cache rate-limit counts are kept in: the shared cache named by LOCATION, or, while it errors, this
    process's memory (`RATELIMIT_USE_CACHE` names this one)."""

    def __init__(self, location: str, params: dict[str, Any]) -> None:
        super().__init__(params)
        self._shared_alias = location or "default"
        # LocMemCache instances of one name share their store: one memory for every thread of the process.
        self._memory = LocMemCache("ratelimit-failover", {"OPTIONS": {"MAX_ENTRIES": 100_000}})

    def _call(self, method: str, *args: Any) -> Any:
        global _shared_down_until
        if time.monotonic() >= _shared_down_until:
            try:
                return getattr(caches[self._shared_alias], method)(*args)
            except ValueError:
                raise  # incr of a key that has expired: an answer, not a failure
            except Exception:
                logger.warning(
                    "the rate-limit cache failed; counting in this process's memory for %s s",
                    SHARED_RETRY_SECONDS,
                    exc_info=True,
                )
                _shared_down_until = time.monotonic() + SHARED_RETRY_SECONDS
        return getattr(self._memory, method)(*args)

    def add(
        self, key: str, value: Any, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        return bool(self._call("add", key, value, timeout, version))

    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        return self._call("get", key, default, version)

    def set(
        self, key: str, value: Any, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        self._call("set", key, value, timeout, version)

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> int:
        return int(self._call("incr", key, delta, version))

    def delete(self, key: str, version: int | None = None) -> bool:
        return bool(self._call("delete", key, version))

    def touch(self, key: str, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return bool(self._call("touch", key, timeout, version))

    def clear(self) -> None:
        """Forget the counts kept in memory (the shared cache holds other data: clear it by its own name)."""
        self._memory.clear()
