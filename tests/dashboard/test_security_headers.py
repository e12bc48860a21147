"""Every page carries a Content-Security-Policy that allows no inline script or style, and the pages need none;
repeated failed logins lock the username out from that address."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from dashboard.views.accounts import LOCKED_OUT
from evaluation.models import VerifyRun
from garden.models import Article, Topic
from tests.factories import login, verification_with_claims

pytestmark = pytest.mark.django_db

QUESTION = "When did Ashcombe station reopen?"
# Opening tags with an event handler (onclick=...) or a style attribute, and <script> or <style> elements with
# inline content: all of these the policy blocks.
INLINE = re.compile(
    r"<[a-z][^>]*\s(on[a-z]+|style)\s*=|<style\b|<script\b(?![^>]*\bsrc=)(?![^>]*application/json)"
)


def pages(client: Client) -> list[str]:
    answer = verification_with_claims(3).answer
    run = VerifyRun.objects.create(label="baseline", mode="local", status="done", report={})
    article = Article.objects.filter(retired_at__isnull=True).first()
    topic = Topic.objects.first()
    assert article is not None and topic is not None
    return [
        "/",
        answer.get_absolute_url(),
        "/articles/",
        article.get_absolute_url(),
        topic.get_absolute_url(),
        "/review/",
        "/operators/logs/",
        "/operators/runs/",
        f"/operators/runs/{run.pk}/",
        "/accounts/login/",
        "/admin/",
    ]


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def test_every_page_has_a_policy_without_inline_script_and_needs_none(client):
    login(client, "operator")
    urls = pages(client)
    client.post("/", {"question": QUESTION})
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        directives = policy(response)
        assert directives["default-src"] == ["'self'"], url
        assert directives["script-src"] == ["'self'"] and directives["style-src"] == ["'self'"], url
        if not url.startswith("/admin/"):  # Django's admin is Django's: its templates are not ours to change
            html = response.content.decode()
            assert not INLINE.search(html), (url, INLINE.search(html))


def test_the_api_and_its_errors_carry_the_policy_too(client):
    assert policy(client.get("/api/health"))["default-src"] == ["'self'"]
    assert policy(client.get("/articles/no-such-article/"))["default-src"] == ["'self'"]


def test_the_pattern_finds_inline_script_and_style():
    for html in (
        '<p onclick="x()">',
        '<div style="color:red">',
        "<script>alert(1)</script>",
        "<style>p{}</style>",
    ):
        assert INLINE.search(html), html
    for html in ('<script src="/static/x.js" defer></script>', '<script type="application/json" id="s">{}'):
        assert not INLINE.search(html), html


def test_htmx_is_told_not_to_inject_its_indicator_style(client):
    assert '"includeIndicatorStyles": false' in client.get("/").content.decode()


def test_repeated_failed_logins_lock_the_username_out_from_that_address(settings):
    settings.AXES_FAILURE_LIMIT = 3
    User.objects.create_user("reader", password="the-right-one")
    client = Client()
    for _ in range(2):
        wrong = client.post("/accounts/login/", {"username": "reader", "password": "wrong"})
        assert wrong.status_code == 200 and "didn't match" in wrong.content.decode()
    locked = client.post("/accounts/login/", {"username": "reader", "password": "wrong"})
    message = LOCKED_OUT.format(minutes=15)
    assert locked.status_code == 429 and escape(message) in locked.content.decode()
    assert int(locked["Retry-After"]) == 15 * 60
    # Now even the right password is refused from here, and nobody is logged in.
    right = client.post("/accounts/login/", {"username": "reader", "password": "the-right-one"})
    assert right.status_code == 429 and "_auth_user_id" not in client.session
    # The same account from another address is not locked out by this one.
    elsewhere = Client(REMOTE_ADDR="10.9.8.7")
    done = elsewhere.post("/accounts/login/", {"username": "reader", "password": "the-right-one"})
    assert done.status_code == 302 and "_auth_user_id" in elsewhere.session


def test_a_right_password_logs_in_and_clears_earlier_failures(settings):
    settings.AXES_FAILURE_LIMIT = 2
    User.objects.create_user("reader", password="the-right-one")
    client = Client()
    assert client.post("/accounts/login/", {"username": "reader", "password": "wrong"}).status_code == 200
    ok = client.post(
        "/accounts/login/", {"username": "reader", "password": "the-right-one", "next": "/articles/"}
    )
    assert ok.status_code == 302 and ok["Location"] == "/articles/"
    client.post("/accounts/logout/")
    assert client.post("/accounts/login/", {"username": "reader", "password": "wrong"}).status_code == 200
