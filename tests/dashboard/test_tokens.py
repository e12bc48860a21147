"""Personal API tokens: a signed-in user creates, lists and revokes them on their account page; a call with one acts
as its user (their role, their rate limit, their line in the ledger), needs no CSRF token, is refused at once when
revoked, and never leaves the token in a log line."""

import datetime
import logging
import re
from decimal import Decimal
from typing import cast

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone
from django.utils.html import escape
from django.views.debug import ExceptionReporter, get_exception_reporter_class

from config.scrubbing import ScrubbingFormatter
from dashboard.api import CSRF_FAILED
from dashboard.bearer import TOKEN_MALFORMED, TOKEN_SCOPE_MISSING
from dashboard.ratelimit import RATE_LIMITED
from dashboard.views.accounts import TOKEN_REVOKED
from garden.models import Question, Sync
from tests.factories import login, page_text
from tests.fakes.messages_api import FakeMessagesAPI
from verifier.models import ApiToken, SignInIdentity, Spend, SpendPurpose
from verifier.roles import OPERATOR, READER
from verifier.scopes import TokenScope
from verifier.tokens import (
    TOKEN_ACCOUNT_INACTIVE,
    TOKEN_EXPIRED,
    TOKEN_NAME_EMPTY,
    TOKEN_NAME_TOO_LONG,
    TOKEN_PASSWORD_CHANGED,
    TOKEN_REFUSED,
    TOKEN_SCOPES_NONE,
    TOKEN_SIGN_IN_STALE,
    token_create,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_counts")]

QUESTION = "When did Ashcombe station reopen?"
CHECKED = "Ashcombe station reopened in 1990."


def user_of(role: str | None, name: str | None = None) -> User:
    user = User.objects.create_user(name or role or "nobody", password="pw-not-used")
    if role:
        user.groups.add(Group.objects.get(name=role))
    return user


def token_of(user: User, name: str = "laptop") -> str:
    return token_create(user_id=user.pk, name=name, scopes=list(TokenScope))[1]


def bearer(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {raw}"}


def ask(client: Client, **extra):
    return client.post("/api/ask", {"question": QUESTION}, content_type="application/json", **extra)


def check(client: Client, **extra):
    return client.post("/api/check", {"text": CHECKED}, content_type="application/json", **extra)


def test_a_user_creates_lists_and_revokes_a_token_on_their_account_page(client):
    login(client, READER)
    assert 'href="/accounts/tokens/"' in client.get("/").content.decode()  # linked from the header
    assert "You have no tokens yet." in client.get("/accounts/tokens/").content.decode()

    form = page_text(client.get("/accounts/tokens/").content.decode())
    assert re.search(r'value="read"\s+checked', form) and re.search(r'value="ask"\s+checked', form)
    assert not re.search(r'value="check"\s+checked', form)  # read and ask ticked to begin with
    created = client.post("/accounts/tokens/", {"name": "  Claude   Desktop ", "scopes": ["read", "ask"]})
    assert created.status_code == 200 and "no-store" in created["Cache-Control"]
    [token] = ApiToken.objects.all()
    [raw] = re.findall(r'id="created-token"[^>]*value="([^"]+)"', created.content.decode())
    assert raw.startswith("gw_") and raw.startswith(token.prefix) and len(raw) == 46
    assert "shown only this once" in created.content.decode()
    assert token.name == "Claude Desktop" and raw not in token.digest  # only its digest is kept
    assert token.scopes == ["read", "ask"]

    listed = page_text(client.get("/accounts/tokens/").content.decode())
    assert raw not in listed  # never shown again
    assert "<td>Claude Desktop</td>" in listed and f"{token.prefix}…" in listed
    assert "read, ask" in listed
    assert "never" in listed and "Revoke…" in listed

    confirm = client.get(f"/accounts/tokens/{token.pk}/revoke/").content.decode()
    assert escape("Revoke the token “Claude Desktop”?") in confirm and 'method="post"' in confirm
    assert ApiToken.objects.get().revoked_at is None  # asking to confirm revokes nothing
    done = client.post(f"/accounts/tokens/{token.pk}/revoke/", follow=True)
    assert escape(TOKEN_REVOKED.format(name="Claude Desktop")) in done.content.decode()
    assert "Revoked " in page_text(done.content.decode()) and ApiToken.objects.get().revoked_at is not None


def test_a_read_only_token_may_not_ask_and_says_which_scope_it_needs(client):
    reader = user_of(READER)
    _, raw = token_create(user_id=reader.pk, name="reading", scopes=["read"])
    refused = ask(client, headers=bearer(raw))
    assert refused.status_code == 403
    assert refused.json() == {"error": TOKEN_SCOPE_MISSING.format(scope="ask", scopes="`read`")}
    assert Question.objects.count() == 0  # nothing was asked
    assert client.get("/api/health", headers=bearer(raw)).status_code == 200  # needs no scope

    _, asker = token_create(user_id=reader.pk, name="asking")  # read and ask, as the page ticks them at first
    answered = ask(client, headers=bearer(asker))
    assert answered.status_code == 200
    answer_id = answered.json()["answer_id"]
    assert client.get(f"/api/answers/{answer_id}", headers=bearer(asker)).status_code == 200
    for path in [f"/api/answers/{answer_id}", f"/api/answers/{answer_id}/verdict"]:
        assert client.get(path, headers=bearer(raw)).status_code == 403, path
    marked = client.post(
        f"/api/answers/{answer_id}/mark",
        {"helpful": True},
        content_type="application/json",
        headers=bearer(raw),
    )
    assert marked.status_code == 403 and "`ask` scope" in marked.json()["error"]

    checked = check(client, headers=bearer(asker))
    assert checked.status_code == 403 and "`check` scope" in checked.json()["error"]
    _, checker = token_create(user_id=reader.pk, name="checking", scopes=["check"])
    assert check(client, headers=bearer(checker)).status_code == 200


def test_a_token_needs_something_it_may_do(client):
    login(client, READER)
    page = client.post("/accounts/tokens/", {"name": "nothing"})
    assert page.status_code == 400 and escape(TOKEN_SCOPES_NONE) in page.content.decode()
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize(
    ("name", "error"),
    [("   ", TOKEN_NAME_EMPTY), ("x" * 101, TOKEN_NAME_TOO_LONG.format(limit=100, length=101))],
)
def test_a_token_needs_a_name_of_at_most_100_characters(client, name, error):
    login(client, READER)
    page = client.post("/accounts/tokens/", {"name": name})
    assert page.status_code == 400 and escape(error) in page.content.decode()
    assert not ApiToken.objects.exists()


def test_the_account_page_is_for_signed_in_users_only(client):
    page = client.get("/accounts/tokens/")
    assert page.status_code == 302 and page["Location"].startswith("/accounts/login/")
    assert (
        client.post("/accounts/tokens/", {"name": "x"}).status_code == 302 and not ApiToken.objects.exists()
    )


def test_nobody_sees_or_revokes_anothers_token(client):
    alice = user_of(READER, "alice")
    token_of(alice, "alice's laptop")
    token = ApiToken.objects.get()
    login(client, READER)
    assert "alice's laptop" not in client.get("/accounts/tokens/").content.decode()
    assert client.get(f"/accounts/tokens/{token.pk}/revoke/").status_code == 404
    assert client.post(f"/accounts/tokens/{token.pk}/revoke/").status_code == 404
    assert ApiToken.objects.get().revoked_at is None


def test_a_readers_token_asks_and_checks_as_the_reader(client, settings):
    settings.ANONYMOUS_CAN_ASK = False
    reader = user_of(READER)
    raw = token_of(reader)
    assert ask(client).status_code == 403 and check(client).status_code == 403  # no token: a visitor
    asked = ask(client, headers=bearer(raw))
    assert asked.status_code == 200 and asked.json()["answer"]
    assert Question.objects.get().asked_by == reader
    assert check(client, headers=bearer(raw)).status_code == 200
    answer_id = asked.json()["answer_id"]
    assert client.get(f"/api/answers/{answer_id}", headers=bearer(raw)).status_code == 200


def test_a_token_has_its_users_role_no_more(client):
    Sync.objects.create(folders=["/srv/garden"], failures=[["hr/salaries.md", "front matter is not YAML"]])
    reader, operator, nobody = user_of(READER), user_of(OPERATOR), user_of(None)
    as_reader = client.get("/api/health", headers=bearer(token_of(reader))).json()
    assert as_reader["garden"]["failures"] == []  # which notes failed is for operators
    as_operator = client.get("/api/health", headers=bearer(token_of(operator))).json()
    assert as_operator["garden"]["failures"] == [
        {"path": "hr/salaries.md", "reason": "front matter is not YAML"}
    ]
    assert check(client, headers=bearer(token_of(nobody))).status_code == 403  # an account with no role


def test_a_token_call_needs_no_csrf_token_and_a_session_call_still_does():
    browser = Client(enforce_csrf_checks=True)
    reader = user_of(READER)
    browser.force_login(reader)
    assert ask(browser).json() == {"error": CSRF_FAILED}
    script = Client(enforce_csrf_checks=True)
    assert ask(script, headers=bearer(token_of(reader))).status_code == 200
    # A token beside a session cookie: the token decides, and needs no CSRF token either.
    assert ask(browser, headers=bearer(token_of(reader, "second"))).status_code == 200


def test_a_revoked_unknown_or_malformed_token_is_refused_at_once(client):
    reader = user_of(READER)
    raw = token_of(reader)
    assert ask(client, headers=bearer(raw)).status_code == 200
    client.force_login(reader)
    client.post(f"/accounts/tokens/{ApiToken.objects.get().pk}/revoke/")
    client.logout()
    refused = ask(client, headers=bearer(raw))
    assert refused.status_code == 401 and refused.json() == {"error": TOKEN_REFUSED}
    assert refused["WWW-Authenticate"].startswith("Bearer")
    unknown = "gw_" + "A" * 43
    assert client.get("/api/health", headers=bearer(unknown)).json() == {"error": TOKEN_REFUSED}
    assert ask(client, headers=bearer("gw_short")).json() == {"error": TOKEN_REFUSED}
    for header in ["Bearer", "Bearer  ", raw, f"Token {raw}"]:
        malformed = ask(client, headers={"Authorization": header})
        assert malformed.status_code == 401 and malformed.json() == {"error": TOKEN_MALFORMED}, header
    assert Question.objects.count() == 1  # none of them asked anything


def test_another_scheme_is_left_to_the_proxy_that_sent_it(client, settings):
    """A proxy in front of the site may sign its users in with Basic: such a call goes on as it would without
    the header (here a visitor's, with visitors not allowed to ask), not refused as a bad token."""
    settings.ANONYMOUS_CAN_ASK = False
    without = ask(client)
    with_basic = ask(client, headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert with_basic.status_code == without.status_code != 401
    assert with_basic.json() == without.json()


def test_a_token_lasts_api_token_days_and_is_then_refused_saying_it_expired(client, settings):
    settings.API_TOKEN_DAYS = 30
    reader = user_of(READER)
    raw = token_of(reader)
    token = ApiToken.objects.get()
    assert token.expires_at - token.created_at == datetime.timedelta(days=30)
    client.force_login(reader)
    listed = page_text(client.get("/accounts/tokens/").content.decode())
    assert "Expires" in listed and token.expires_at.strftime("%Y-%m-%d") in listed
    assert "works for 30 days" in listed
    client.logout()
    assert ask(client, headers=bearer(raw)).status_code == 200

    token.expires_at = timezone.now() - datetime.timedelta(seconds=1)
    token.save()
    refused = ask(client, headers=bearer(raw))
    expired = TOKEN_EXPIRED.format(date=token.expires_at.date().isoformat())
    assert refused.status_code == 401 and refused.json() == {"error": expired}
    assert "expired" in expired
    assert Question.objects.count() == 1  # the expired token asked nothing
    client.force_login(reader)
    assert "Expired" in page_text(client.get("/accounts/tokens/").content.decode())


def test_a_provider_members_token_needs_a_sign_in_within_api_token_sign_in_days(client, settings):
    """Their groups (audiences, roles) are read at sign-in: a token of theirs stops once that is too old."""
    settings.API_TOKEN_SIGN_IN_DAYS = 7
    member = user_of(READER, "member")
    raw = token_of(member)
    long_ago = timezone.now() - datetime.timedelta(days=8)
    identity = SignInIdentity.objects.create(
        user=member, issuer="https://id.example.org", subject="s-1", signed_in_at=long_ago
    )
    refused = ask(client, headers=bearer(raw))
    assert refused.status_code == 401
    assert refused.json() == {"error": TOKEN_SIGN_IN_STALE.format(date=long_ago.date().isoformat())}
    assert ask(client, headers=bearer(token_of(user_of(READER, "local")))).status_code == 200  # no provider

    identity.signed_in_at = timezone.now()  # signed in again: groups read afresh
    identity.save()
    assert ask(client, headers=bearer(raw)).status_code == 200
    settings.API_TOKEN_SIGN_IN_DAYS = 0  # off
    SignInIdentity.objects.update(signed_in_at=long_ago)
    assert ask(client, headers=bearer(raw)).status_code == 200


def test_a_deactivated_users_token_is_refused_saying_so(client):
    reader = user_of(READER)
    raw = token_of(reader)
    reader.is_active = False
    reader.save()
    refused = ask(client, headers=bearer(raw))
    assert refused.status_code == 401 and refused.json() == {"error": TOKEN_ACCOUNT_INACTIVE}
    assert Question.objects.count() == 0


def test_a_password_change_ends_the_accounts_tokens_and_a_new_token_works(client):
    reader = user_of(READER)
    raw = token_of(reader)
    assert ask(client, headers=bearer(raw)).status_code == 200
    client.force_login(reader)
    changed = client.post(
        "/accounts/password_change/",
        {
            "old_password": "pw-not-used",
            "new_password1": "a-new-Passw0rd!",
            "new_password2": "a-new-Passw0rd!",
        },
    )
    assert changed.status_code == 302, changed.content.decode()[:500]
    client.logout()
    refused = ask(client, headers=bearer(raw))
    assert refused.status_code == 401 and refused.json() == {"error": TOKEN_PASSWORD_CHANGED}
    assert "password changed" in TOKEN_PASSWORD_CHANGED
    assert ask(client, headers=bearer(token_of(reader, "after"))).status_code == 200  # made under the new one
    assert Question.objects.count() == 2


def test_a_token_of_one_user_never_acts_as_another(client):
    alice, bob = user_of(READER, "alice"), user_of(READER, "bob")
    client.force_login(bob)  # bob's session cookie, alice's token
    assert ask(client, headers=bearer(token_of(alice))).status_code == 200
    assert Question.objects.get().asked_by == alice
    # A refused token does not fall back to the session beside it either.
    assert ask(client, headers=bearer("gw_" + "B" * 43)).status_code == 401
    assert Question.objects.count() == 1


def test_last_used_is_set_at_most_once_a_minute(client):
    raw = token_of(user_of(READER))
    assert ApiToken.objects.get().last_used_at is None
    client.get("/api/health", headers=bearer(raw))
    first = ApiToken.objects.get().last_used_at
    assert first is not None and timezone.now() - first < datetime.timedelta(seconds=30)
    client.get("/api/health", headers=bearer(raw))
    assert ApiToken.objects.get().last_used_at == first
    ApiToken.objects.update(last_used_at=first - datetime.timedelta(minutes=2))
    client.get("/api/health", headers=bearer(raw))
    later = ApiToken.objects.get().last_used_at
    assert later is not None and later > first


def test_a_token_never_appears_in_a_log_line(client, caplog, monkeypatch):
    raw = token_of(user_of(READER))

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"failed while serving {raw}")

    monkeypatch.setattr("dashboard.actions.asking.ask", crash)
    client.raise_request_exception = False
    caplog.set_level(logging.INFO)
    assert ask(client, headers=bearer(raw)).status_code == 500
    logger = logging.getLogger("tests.tokens")
    logger.warning("request headers: %s", {"Host": "testserver", **bearer(raw)})
    logger.warning("curl -H 'Authorization: Bearer %s' /api/ask", raw)
    # Formatted as the site's log handler formats them (settings.LOGGING's "plain" formatter).
    formatter = ScrubbingFormatter("%(levelname)s %(name)s: %(message)s")
    written = "\n".join(formatter.format(record) for record in caplog.records)
    assert "RuntimeError" in written and "Authorization" in written  # the lines were logged...
    assert raw not in written and raw[len("gw_") :] not in written  # ...without the token
    # Nor in the admins' error report of the crash (built as AdminEmailHandler builds it), headers and all.
    [crashed] = [r for r in caplog.records if r.name == "django.request" and r.exc_info]
    assert crashed.exc_info is not None
    reporter_class = cast(type[ExceptionReporter], get_exception_reporter_class(crashed.request))
    exc_type, exc_value, traceback = crashed.exc_info
    reporter = reporter_class(crashed.request, exc_type, exc_value, traceback, is_email=True)
    report = reporter.get_traceback_text() + reporter.get_traceback_html()
    assert "HTTP_AUTHORIZATION" in report and "failed while serving" in report
    assert raw not in report and raw[len("gw_") :] not in report


def test_a_tokens_calls_are_limited_per_token_not_per_address(client, settings):
    settings.RATE_LIMIT_PER_TOKEN = 2
    settings.RATE_LIMIT_PER_IP = 1
    reader = user_of(READER)
    first, second = token_of(reader), token_of(user_of(READER, "neighbour"))
    for _ in range(2):  # past the address's limit of one
        assert check(client, headers=bearer(first)).status_code == 200
    over = check(client, headers=bearer(first))
    assert over.status_code == 429 and over.json() == {"error": RATE_LIMITED} and int(over["Retry-After"]) > 0
    assert check(client, headers=bearer(second)).status_code == 200  # another token, the same address


def test_a_claude_answer_through_a_token_is_spent_for_its_user_and_token(client, claude: FakeMessagesAPI):
    claude.reply_text("The station reopened in 1990 [1].", input_tokens=2_000, output_tokens=100)
    reader = user_of(READER, "alice")
    raw = token_of(reader, "laptop")
    assert ask(client, headers=bearer(raw)).json()["generator"] == "claude"
    [spend] = Spend.objects.all()
    token = ApiToken.objects.get()
    assert (spend.purpose, spend.user, spend.token, spend.cost_usd) == (
        SpendPurpose.ANSWER,
        reader,
        token,
        Decimal("0.0075"),
    )
    login(client, OPERATOR)
    logs = page_text(client.get("/operators/logs/").content.decode())
    assert escape(f"alice's token “laptop” ({token.prefix}…) $0.0075") in logs


def test_a_claude_answer_asked_on_the_page_is_spent_for_the_reader_with_no_token(client, claude):
    claude.reply_text("The station reopened in 1990 [1].", input_tokens=2_000, output_tokens=100)
    reader = login(client, READER)
    assert client.post("/", {"question": QUESTION}).status_code == 302
    [spend] = Spend.objects.all()
    assert (spend.user, spend.token) == (reader, None)


def test_the_schema_documents_the_bearer_scheme(client):
    schema = client.get("/api/openapi.json").json()
    [(name, scheme)] = schema["components"]["securitySchemes"].items()
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    assert schema["security"] == [{name: []}, {}]  # a token, or none (a visitor, or a session)
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "401" in operation["responses"], f"{method} {path}"


def test_the_token_list_costs_the_same_few_queries_however_many_tokens(client, django_assert_max_num_queries):
    reader = login(client, READER)
    for n in range(12):
        token_of(reader, f"script {n}")
    with django_assert_max_num_queries(8):
        page = client.get("/accounts/tokens/")
    assert page_text(page.content.decode()).count("Revoke…") == 12


def test_a_superuser_revokes_a_leaked_token_in_the_admin(client):
    raw = token_of(user_of(READER, "alice"))
    client.force_login(User.objects.create_superuser("root", password="pw-not-used"))
    listed = client.get("/admin/verifier/apitoken/").content.decode()
    assert "alice" in listed and ApiToken.objects.get().prefix in listed
    done = client.post(
        "/admin/verifier/apitoken/",
        {"action": "revoke", "_selected_action": [ApiToken.objects.get().pk]},
        follow=True,
    )
    assert "1 token revoked." in done.content.decode()
    client.logout()
    assert ask(client, headers=bearer(raw)).json() == {"error": TOKEN_REFUSED}
