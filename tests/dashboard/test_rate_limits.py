"""Asking and fact-checking are rate limited per address and per user, with a clear 429, keyed on an address a
client cannot forge, and still limited when the shared cache is away."""

import logging

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache.backends.base import BaseCache
from django.test import RequestFactory

from dashboard.ratelimit import RATE_LIMITED, client_ip

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_counts")]

QUESTION = "When did Ashcombe station reopen?"


def check(client, text="The viaduct has arches.", **extra):
    return client.post("/api/check", {"text": text}, content_type="application/json", **extra)


def ask(client, **extra):
    return client.post("/api/ask", {"question": QUESTION}, content_type="application/json", **extra)


def test_an_address_over_its_limit_gets_a_clear_429_on_the_api(client, settings):
    settings.RATE_LIMIT_PER_IP = 2
    settings.ANONYMOUS_CAN_CHECK = True
    for _ in range(2):
        assert check(client).status_code == 200
    assert ask(client).status_code == 200  # asking and checking are counted separately
    over = check(client)
    assert over.status_code == 429 and over.json() == {"error": RATE_LIMITED}
    assert 0 < int(over["Retry-After"]) <= 60
    assert check(client, "x", REMOTE_ADDR="10.9.8.7").status_code == 200


def test_a_user_over_their_limit_is_refused_from_any_address(client, settings):
    settings.RATE_LIMIT_PER_USER = 1
    user = User.objects.create_user("r", password="x")
    user.groups.add(Group.objects.get(name="reader"))
    client.force_login(user)
    assert client.post("/", {"question": QUESTION}).status_code == 302
    page = client.post("/", {"question": QUESTION}, REMOTE_ADDR="10.1.1.1")
    assert page.status_code == 429 and RATE_LIMITED in page.content.decode()
    assert 0 < int(page["Retry-After"]) <= 60
    htmx = client.post("/", {"question": QUESTION}, headers={"HX-Request": "true"}, REMOTE_ADDR="10.2.2.2")
    assert htmx.status_code == 429 and 'role="alert"' in htmx.content.decode()


@pytest.mark.parametrize(
    ("proxies", "forwarded", "address"),
    [
        (0, "", "10.0.0.1"),
        (0, "203.0.113.7", "10.0.0.1"),  # no proxy of ours: the header is the client's own words
        (1, "203.0.113.7", "203.0.113.7"),
        (1, "6.6.6.6, 203.0.113.7", "203.0.113.7"),  # the left-most entry was written by the client
        (2, "6.6.6.6, 203.0.113.7, 10.0.0.9", "203.0.113.7"),
        (2, "203.0.113.7", "10.0.0.1"),  # fewer entries than proxies: only the address that reached us
        (1, "not-an-address", "not-an-address"),
        (1, "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::"),  # an IPv6 client holds its whole /64
    ],
)
def test_the_client_address_comes_from_the_trusted_proxies(settings, proxies, forwarded, address):
    settings.RATE_LIMIT_TRUSTED_PROXIES = proxies
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    request = RequestFactory().get("/", headers=headers, REMOTE_ADDR="10.0.0.1")
    assert client_ip(request) == address


def test_a_spoofed_forwarded_for_entry_does_not_escape_the_limit(client, settings):
    settings.RATE_LIMIT_TRUSTED_PROXIES = 1
    settings.RATE_LIMIT_PER_IP = 2
    proxy = {"REMOTE_ADDR": "10.0.0.1"}
    for spoofed in ("1.1.1.1", "2.2.2.2"):
        assert ask(client, headers={"X-Forwarded-For": f"{spoofed}, 203.0.113.7"}, **proxy).status_code == 200
    over = ask(client, headers={"X-Forwarded-For": "3.3.3.3, 203.0.113.7"}, **proxy)
    assert over.status_code == 429 and over.json() == {"error": RATE_LIMITED}
    # Another client behind the same proxy has a limit of its own.
    assert ask(client, headers={"X-Forwarded-For": "198.51.100.4"}, **proxy).status_code == 200


class BrokenCache(BaseCache):
    """A cache whose server is away: every call fails, as Redis's client does."""

    def __init__(self, location, params):
        super().__init__(params)

    def _fail(self, *args, **kwargs):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    add = get = set = incr = delete = touch = clear = _fail


def test_without_its_cache_the_limit_holds_in_memory(client, settings, caplog):
    settings.CACHES = {
        **settings.CACHES,
        "broken": {"BACKEND": "tests.dashboard.test_rate_limits.BrokenCache"},
        "ratelimit": {"BACKEND": "dashboard.ratelimit.FailoverCache", "LOCATION": "broken"},
    }
    settings.RATE_LIMIT_PER_IP = 2
    caplog.set_level(logging.WARNING, logger="dashboard.ratelimit")
    for _ in range(2):
        assert ask(client).status_code == 200
    over = ask(client)
    assert over.status_code == 429 and over.json() == {"error": RATE_LIMITED}
    assert 0 < int(over["Retry-After"]) <= 60
    assert ask(client, REMOTE_ADDR="10.9.8.7").status_code == 200
    assert "the rate-limit cache failed" in caplog.text
