"""Signing in with the team's account, against a real OpenID Connect provider (django-oidc-provider in a process of
its own): the button, the way back signed in with the audiences and role its groups claim gives, signing out there
too, and every refusal on a clear page: the provider down, a token badly signed, expired or for another
application, a state replayed or unknown. Local accounts keep working, and can be turned off."""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
import requests
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from config.services import free_port
from dashboard import oidc
from dashboard.views.accounts import LOCAL_ACCOUNTS_OFF
from tests.oidc_issuer.issuer import Issuer, Member, rsa_pem
from verifier.models import SignInIdentity

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CALLBACK = "http://testserver/accounts/sign-in/callback/"
HOME = "http://testserver/"
PROVIDER_NAME = "Acme team"


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Issuer]:
    started = Issuer(
        root=tmp_path_factory.mktemp("issuer"),
        redirect_uris=[CALLBACK],
        post_logout_redirect_uris=[HOME],
        members=[
            Member("alice", ["hr-team", "garden-editors", "chess-club"], email="alice@example.org"),
            Member("bob", []),
        ],
    ).start()
    yield started
    started.stop()


@pytest.fixture
def team(settings: Any, issuer: Issuer) -> Issuer:
    """Groundwork configured to sign in at the test provider."""
    for name, value in issuer.settings().items():
        setattr(settings, name, value)
    settings.OIDC_PROVIDER_NAME = PROVIDER_NAME
    settings.OIDC_GROUP_AUDIENCES = {"hr-team": "hr", "board-members": "board"}
    settings.OIDC_GROUP_ROLES = {"garden-editors": "editor"}
    return issuer


def to_provider(client: Client, next_url: str = "") -> str:
    """Press "Sign in with ...": the address of the provider's page it sends the browser to."""
    started = client.get("/accounts/sign-in/start/", {"next": next_url} if next_url else {})
    assert started.status_code == 302, started.content.decode()
    return str(started["Location"])


def signed_in_name(client: Client) -> str | None:
    user = client.get("/").wsgi_request.user
    return user.get_username() if user.is_authenticated else None


def test_without_an_issuer_the_login_page_is_as_before(client: Client) -> None:
    page = client.get("/accounts/login/").content.decode()
    assert "Sign in with" not in page and 'name="password"' in page
    assert client.get("/accounts/sign-in/start/").status_code == 404


def test_a_member_signs_in_and_comes_back_with_the_audiences_and_role_of_their_groups(
    client: Client, team: Issuer
) -> None:
    page = client.get("/accounts/login/").content.decode()
    assert f"Sign in with {PROVIDER_NAME}" in page and 'name="password"' in page

    authorize = to_provider(client, next_url="/articles/")
    assert authorize.startswith(f"{team.issuer}/authorize")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(authorize).query)
    assert query["code_challenge_method"] == ["S256"] and query["nonce"] and query["state"]

    back = client.get(team.sign_in(authorize, "alice"))
    assert back.status_code == 302 and back["Location"] == "/articles/"
    assert signed_in_name(client) == "alice"
    alice = User.objects.get(username="alice")
    assert alice.email == "alice@example.org" and not alice.has_usable_password()
    assert sorted(alice.audiences.values_list("name", flat=True)) == ["hr"]
    assert sorted(alice.groups.values_list("name", flat=True)) == ["editor", "reader"]
    assert alice.has_perm("verifier.review_claim")
    identity = SignInIdentity.objects.get(user=alice)
    assert (identity.issuer, identity.audiences_given) == (team.issuer, ["hr"])


def test_signing_in_again_finds_the_same_account_and_a_local_namesake_is_left_alone(
    client: Client, team: Issuer
) -> None:
    local_bob = User.objects.create_user("bob", password="local-password-1")
    client.get(team.sign_in(to_provider(client), "bob"))
    first = SignInIdentity.objects.get(issuer=team.issuer).user
    assert first != local_bob and first.username == "bob-2"
    assert sorted(first.groups.values_list("name", flat=True)) == ["reader"]
    assert list(first.audiences.all()) == []

    again = Client()
    again.get(team.sign_in(to_provider(again), "bob"))
    assert signed_in_name(again) == "bob-2"
    assert SignInIdentity.objects.filter(issuer=team.issuer).count() == 1


def test_signing_out_ends_the_session_here_and_at_the_provider(client: Client, team: Issuer) -> None:
    at_provider = requests.Session()
    client.get(team.sign_in(to_provider(client), "alice", session=at_provider))
    assert signed_in_name(client) == "alice"

    out = client.post("/accounts/logout/")
    assert out.status_code == 302 and out["Location"].startswith(f"{team.issuer}/end-session")
    assert signed_in_name(client) is None
    ended = at_provider.get(out["Location"], allow_redirects=False, timeout=30)
    assert ended.status_code == 302 and ended.headers["Location"].startswith(HOME)

    # The provider asks for the password again: its session is over too.
    again = at_provider.get(to_provider(client), allow_redirects=True, timeout=30)
    assert "issuer-login" in again.text


def test_a_replayed_or_unknown_state_is_refused(client: Client, team: Issuer) -> None:
    callback = team.sign_in(to_provider(client), "alice")
    assert client.get(callback).status_code == 302
    client.post("/accounts/logout/")

    replayed = client.get(callback)
    assert replayed.status_code == 400 and escape(oidc.STATE_UNKNOWN) in replayed.content.decode()
    assert signed_in_name(client) is None

    stranger = Client()  # an answer from the provider to a sign-in this browser never started
    unknown = stranger.get(team.sign_in(to_provider(Client()), "alice"))
    assert unknown.status_code == 400 and escape(oidc.STATE_UNKNOWN) in unknown.content.decode()
    assert signed_in_name(stranger) is None


def test_a_provider_that_does_not_answer_is_a_clear_page(client: Client, team: Issuer, settings: Any) -> None:
    settings.OIDC_ISSUER = f"http://127.0.0.1:{free_port()}/openid"  # nothing listens there
    settings.OIDC_TIMEOUT_SECONDS = 2
    page = client.get("/accounts/sign-in/start/")
    assert page.status_code == 502
    assert escape(oidc.PROVIDER_DOWN.format(provider=PROVIDER_NAME)) in page.content.decode()
    assert "Traceback" not in page.content.decode()


def test_a_token_endpoint_that_stops_answering_is_a_clear_page(
    client: Client, team: Issuer, settings: Any
) -> None:
    # A second process of the same provider, stopped between its sign-in page and the token exchange.
    second = Issuer(
        root=team.root,
        redirect_uris=[CALLBACK],
        post_logout_redirect_uris=[HOME],
        members=[],
        key_pem=team.key_pem,
    ).start()
    settings.OIDC_ISSUER = second.issuer
    callback = second.sign_in(to_provider(client), "alice")
    second.stop()
    page = client.get(callback)
    assert page.status_code == 502
    assert escape(oidc.PROVIDER_DOWN.format(provider=PROVIDER_NAME)) in page.content.decode()
    assert signed_in_name(client) is None and not SignInIdentity.objects.exists()


@pytest.fixture
def tampered(monkeypatch: pytest.MonkeyPatch, team: Issuer) -> dict[str, Any]:
    """The provider's real token response, its ID token replaced by one the test makes from its claims:
    `changes` go into the claims, `key_pem` (when set) signs instead of the provider's key."""
    plan: dict[str, Any] = {"changes": {}, "key_pem": None}
    send = requests.Session.send

    def send_tampered(session: requests.Session, request: requests.PreparedRequest, **kwargs: Any) -> Any:
        response = send(session, request, **kwargs)
        if request.url == f"{team.issuer}/token" and response.status_code == 200:
            body = response.json()
            claims = jwt.decode(body["id_token"], options={"verify_signature": False})
            body["id_token"] = team.signed({**claims, **plan["changes"]}, key_pem=plan["key_pem"])
            response._content = json.dumps(body).encode()
        return response

    monkeypatch.setattr(requests.Session, "send", send_tampered)
    return plan


def refused(client: Client, team: Issuer, message: str) -> None:
    page = client.get(team.sign_in(to_provider(client), "alice"))
    assert page.status_code == 403, page.content.decode()
    assert escape(message) in page.content.decode() and "Traceback" not in page.content.decode()
    assert signed_in_name(client) is None and not SignInIdentity.objects.exists()


def test_the_tamper_changes_nothing_when_asked_for_nothing(
    client: Client, team: Issuer, tampered: Any
) -> None:
    """The check on the tests below: a token re-made with the provider's key and unchanged claims signs in."""
    assert client.get(team.sign_in(to_provider(client), "alice")).status_code == 302
    assert signed_in_name(client) == "alice"


def test_a_token_with_a_bad_signature_is_refused(client: Client, team: Issuer, tampered: Any) -> None:
    tampered["key_pem"] = rsa_pem()  # another key, under the provider's key id
    refused(client, team, oidc.BAD_SIGNATURE)


def test_an_expired_token_is_refused(client: Client, team: Issuer, tampered: Any) -> None:
    now = int(time.time())
    tampered["changes"] = {"iat": now - 3600, "exp": now - 1800}
    refused(client, team, oidc.EXPIRED)


def test_a_token_for_another_application_is_refused(client: Client, team: Issuer, tampered: Any) -> None:
    tampered["changes"] = {"aud": "another-application"}
    refused(client, team, oidc.WRONG_AUDIENCE)


def test_a_token_from_another_issuer_is_refused(client: Client, team: Issuer, tampered: Any) -> None:
    tampered["changes"] = {"iss": "http://127.0.0.1:1/openid"}
    refused(client, team, oidc.WRONG_ISSUER)


def test_with_local_accounts_off_the_password_form_is_gone_and_a_password_refused(
    client: Client, team: Issuer, settings: Any
) -> None:
    settings.LOCAL_ACCOUNTS = False
    User.objects.create_user("carol", password="local-password-1", is_staff=True, is_superuser=True)
    page = client.get("/accounts/login/").content.decode()
    assert f"Sign in with {PROVIDER_NAME}" in page and 'name="password"' not in page

    for address in ("/accounts/login/", "/admin/login/"):
        posted = client.post(address, {"username": "carol", "password": "local-password-1"})
        assert posted.status_code == 403
        assert escape(LOCAL_ACCOUNTS_OFF.format(provider=PROVIDER_NAME)) in posted.content.decode()
        assert signed_in_name(client) is None
    assert client.get("/admin/login/")["Location"].startswith("/accounts/login/")

    client.get(team.sign_in(to_provider(client), "alice"))
    assert signed_in_name(client) == "alice"


def test_the_provider_down_at_sign_out_still_signs_out_here(
    client: Client, team: Issuer, settings: Any
) -> None:
    client.get(team.sign_in(to_provider(client), "alice"))
    oidc._client.cache_clear()  # the provider's metadata, fetched at sign-in, is gone with it
    settings.OIDC_ISSUER, settings.OIDC_TIMEOUT_SECONDS = f"http://127.0.0.1:{free_port()}/openid", 2
    out = client.post("/accounts/logout/", follow=True)
    assert signed_in_name(client) is None
    assert escape("you may still be signed in there") in out.content.decode()
