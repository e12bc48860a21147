"""Every form and API call is protected against cross-site request forgery: a POST that rides on a session cookie
without the CSRF token is refused, and redirects go only to this site."""

import re
import uuid
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from dashboard.api import CSRF_FAILED
from tests.factories import login, verification_with_claims

pytestmark = pytest.mark.django_db

QUESTION = "When did Ashcombe station reopen?"
# Sample values for each path converter, and for the admin's regex groups.
SAMPLES = {
    "int": "1",
    "uuid": str(uuid.uuid4()),
    "slug": "station-ashcombe",
    "garden_slug": "station-ashcombe",
    "str": "x",
    "path": "1",
}
# Endpoints that take POST: each must answer 403 to a forged one (others may answer 405 instead).
POSTS = {
    "/",
    "/api/ask",
    "/api/check",
    "/review/claims/1/decide/",
    f"/answers/{SAMPLES['uuid']}/mark/",
    f"/answers/{SAMPLES['uuid']}/claims/1/report/",
    "/operators/runs/",
    "/operators/judge/retrain/",
    "/operators/judge/1/activate/",
    "/accounts/login/",
    "/accounts/tokens/",
    "/accounts/tokens/1/revoke/",
    "/accounts/logout/",
    "/admin/login/",
    "/admin/garden/article/add/",
}


def every_path(patterns: list[URLPattern | URLResolver] | None = None, prefix: str = "") -> Iterator[str]:
    """Every address of the URLconf, its parameters filled with sample values."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        route = str(pattern.pattern)
        route = re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLES[m.group(1) or "str"], route)
        route = re.sub(r"\(\?P<\w+>(\w+)[^)]*\)", r"\1", route).strip("^$")  # the group's first choice
        if isinstance(pattern, URLResolver):
            yield from every_path(pattern.url_patterns, prefix + route)
        else:
            yield "/" + prefix + route


def cross_site(client: Client, path: str) -> int:
    data = {"question": QUESTION, "text": QUESTION, "decision": "judge_right", "label": "forged"}
    if path.startswith("/api/"):
        return client.post(path, data, content_type="application/json").status_code
    return client.post(path, data).status_code


def test_a_forged_post_to_any_address_with_a_session_cookie_is_refused():
    client = Client(enforce_csrf_checks=True)
    client.force_login(
        User.objects.create_superuser("op", password="x")
    )  # no permission check stops it first
    client.get("/")  # the browser holds the csrftoken cookie too; the other site cannot read it
    answered = {}
    paths = sorted(set(every_path()))
    assert set(paths) >= POSTS and len(paths) > 50
    for path in paths:
        answered[path] = cross_site(client, path)
    refused = {path for path, code in answered.items() if code == 403}
    assert refused >= POSTS, {path: answered[path] for path in POSTS - refused}
    assert set(answered.values()) <= {403, 405}, {p: c for p, c in answered.items() if c not in (403, 405)}


def test_a_forged_api_post_says_why_and_asks_nothing():
    client = Client(enforce_csrf_checks=True)
    user = User.objects.create_user("reader", password="x")
    user.groups.add(Group.objects.get(name="reader"))
    client.force_login(user)
    response = client.post("/api/ask", {"question": QUESTION}, content_type="application/json")
    assert response.status_code == 403 and response.json() == {"error": CSRF_FAILED}
    # With the token, as the site's own pages send it, the same call works.
    client.get("/")
    token = client.cookies["csrftoken"].value
    ok = client.post(
        "/api/ask", {"question": QUESTION}, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert ok.status_code == 200


def test_an_anonymous_visitors_session_cannot_be_used_cross_site_but_api_clients_need_no_cookie():
    visitor = Client(enforce_csrf_checks=True)
    visitor.get("/")
    token = visitor.cookies["csrftoken"].value
    assert visitor.post("/", {"question": QUESTION, "csrfmiddlewaretoken": token}).status_code == 302
    assert "sessionid" in visitor.cookies  # the session keeps the visitor's questions
    assert visitor.post("/", {"question": QUESTION}).status_code == 403
    assert cross_site(visitor, "/api/ask") == 403
    script = Client(enforce_csrf_checks=True)  # a script calling the API, no cookies
    assert cross_site(script, "/api/ask") == 200


def test_the_pages_carry_the_token_for_forms_and_htmx(client):
    html = client.get("/").content.decode()
    assert 'name="csrfmiddlewaretoken"' in html and 'hx-headers=\'{"x-csrftoken"' in html


@pytest.mark.parametrize(
    "next_url",
    ["https://evil.example/", "//evil.example/review/", "http://evil.example", "javascript:alert(1)"],
)
def test_the_review_form_redirects_only_to_this_site(client, next_url):
    claim = verification_with_claims(1).claims.get()
    login(client, "editor")
    done = client.post(f"/review/claims/{claim.pk}/decide/", {"decision": "judge_right", "next": next_url})
    assert done.status_code == 302 and done["Location"] == "/review/"


def test_the_review_form_goes_back_to_the_page_it_came_from(client):
    claim = verification_with_claims(1).claims.get()
    login(client, "editor")
    back = "/review/?status=contradicted"
    done = client.post(f"/review/claims/{claim.pk}/decide/", {"decision": "judge_right", "next": back})
    assert done.status_code == 302 and done["Location"] == back
