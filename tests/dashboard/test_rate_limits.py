"""Asking and fact-checking are rate limited per IP and per user, with a clear 429."""

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache

from dashboard.ratelimit import RATE_LIMITED

pytestmark = pytest.mark.django_db

QUESTION = "When did Ashcombe station reopen?"


@pytest.fixture(autouse=True)
def fresh_counts():
    cache.clear()
    yield
    cache.clear()


def test_an_address_over_its_limit_gets_a_clear_429_on_the_api(client, settings):
    settings.RATE_LIMIT_PER_IP = 2
    for _ in range(2):
        assert (
            client.post(
                "/api/check", {"text": "The viaduct has arches."}, content_type="application/json"
            ).status_code
            == 200
        )
    refused = client.post("/api/ask", {"question": QUESTION}, content_type="application/json")
    assert refused.status_code == 200  # asking and checking are counted separately
    over = client.post("/api/check", {"text": "The viaduct has arches."}, content_type="application/json")
    assert over.status_code == 429 and over.json() == {"error": RATE_LIMITED}
    assert 0 < int(over["Retry-After"]) <= 60
    other = client.post("/api/check", {"text": "x"}, content_type="application/json", REMOTE_ADDR="10.9.8.7")
    assert other.status_code == 200


def test_a_user_over_their_limit_is_refused_from_any_address(client, settings):
    settings.RATE_LIMIT_PER_USER = 1
    user = User.objects.create_user("r", password="x")
    user.groups.add(Group.objects.get(name="reader"))
    client.force_login(user)
    assert client.post("/", {"question": QUESTION}).status_code == 302
    page = client.post("/", {"question": QUESTION}, REMOTE_ADDR="10.1.1.1")
    assert page.status_code == 429 and RATE_LIMITED in page.content.decode()
    htmx = client.post("/", {"question": QUESTION}, headers={"HX-Request": "true"}, REMOTE_ADDR="10.2.2.2")
    assert htmx.status_code == 429 and 'role="alert"' in htmx.content.decode()
