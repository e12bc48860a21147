"""Each action gives the same caller the same outcome on every surface that offers it (the pages, the JSON API,
the MCP tools, `manage.py ask`): they all call the one use case (`dashboard.actions`), which alone decides
whether the caller may, how often, on whose spend and what they may see.

A row is an action, a caller's situation and the outcome every surface must give; each surface is called as
its users call it (a signed-in browser, a personal token, an agent on stdio, the operator's command line) and its
answer is read back as one of the outcomes below.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from mcp.server.mcpserver.exceptions import ToolError

from dashboard.actions.callers import account_request
from dashboard.mcp_server import ASK_NOT_ALLOWED, CHECK_NOT_ALLOWED, GardenTools
from dashboard.ratelimit import RATE_LIMITED
from garden.models import Answer, Article, Conversation, Passage
from tests.factories import STATION_QUESTION, STATION_QUOTE, answer_for, member
from verifier.models import Claim
from verifier.queueing import verification_create
from verifier.scopes import TokenScope
from verifier.tokens import token_create
from verifier.verifying import verification_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_counts")]

ALLOWED, REFUSED, NOT_SHOWN, LIMITED, OVER_BUDGET = (
    "allowed",
    "refused",
    "not shown",
    "limited",
    "over budget",
)
ARTICLE = "harrowden-viaduct"


class Caller:
    """One account, as each surface calls: a signed-in browser, a personal token, an agent on stdio."""

    def __init__(self, user: User, browser: Client) -> None:
        self.user = user
        self.browser = browser
        secret = token_create(user_id=user.pk, name="script", scopes=[scope.value for scope in TokenScope])[1]
        self.script = Client(headers={"Authorization": f"Bearer {secret}"})
        self.agent = GardenTools(account_request(user))


def _status(code: int, *, budget_held: bool = False) -> str:
    if code == 200:
        return OVER_BUDGET if budget_held else ALLOWED
    return {403: REFUSED, 404: NOT_SHOWN, 429: LIMITED}.get(code, f"HTTP {code}")


def _page(response: Any) -> str:
    """A page's answer: a question is redirected to its answer's page, a visitor without the role to log in."""
    if response.redirect_chain and "/accounts/login/" in response.redirect_chain[-1][0]:
        return REFUSED
    latest = Answer.objects.order_by("-pk").first()
    return _status(response.status_code, budget_held=bool(latest and latest.budget_held))


def _tool(call: Callable[[], dict[str, Any]]) -> str:
    """An MCP tool's answer: its result, or the tool error an agent reads."""
    try:
        result = call()
    except ToolError as error:
        message = str(error)
        if message.startswith(RATE_LIMITED):
            return LIMITED
        if message in {ASK_NOT_ALLOWED, CHECK_NOT_ALLOWED} or " may not " in message:
            return REFUSED
        return NOT_SHOWN
    return OVER_BUDGET if result.get("budget_held") else ALLOWED


def _command(question: str, username: str) -> str:
    try:
        call_command("ask", question, "--as", username, "--json", stdout=io.StringIO())
    except CommandError:
        return NOT_SHOWN
    return OVER_BUDGET if Answer.objects.order_by("-pk").first().budget_held else ALLOWED  # type: ignore[union-attr]


def _answer() -> tuple[Answer, Claim]:
    """A checked answer from the viaduct's note, a turn of a conversation, and its verified claim."""
    passage = Passage.objects.filter(article__slug=ARTICLE, is_current=True).order_by("ordinal")[0]
    answer = answer_for(f"{passage.text.split('.')[0]}.", passage)
    answer.question.conversation = Conversation.objects.create()
    answer.question.save()
    verification = verification_create(answer=answer)
    assert verification is not None
    verification_run(verification_id=verification.pk)
    claim = Claim.objects.filter(verification__answer=answer, is_claim=True).first()
    assert claim is not None
    return answer, claim


def _withhold_sources(answer: Answer) -> None:
    for source in answer.sources.all():
        source.passage.article.withheld_at = timezone.now()
        source.passage.article.save(update_fields=["withheld_at"])


def ask_everywhere(caller: Caller) -> dict[str, str]:
    return {
        "page": _page(caller.browser.post("/", {"question": STATION_QUESTION}, follow=True)),
        "api": _status(
            (
                r := caller.script.post("/api/ask", {"question": STATION_QUESTION}, "application/json")
            ).status_code,
            budget_held=r.status_code == 200 and r.json()["budget_held"],
        ),
        "mcp": _tool(lambda: caller.agent.ask(STATION_QUESTION)),
    }


def verdict_everywhere(caller: Caller, answer: Answer, claim: Claim) -> dict[str, str]:
    page = caller.browser.get(f"/answers/{answer.public_id}/verdict/", headers={"HX-Request": "true"})
    return {
        "page": _status(page.status_code),
        "api": _status(caller.script.get(f"/api/answers/{answer.public_id}/verdict").status_code),
        "mcp": _tool(lambda: caller.agent.verdict(str(answer.public_id))),
    }


def mark_everywhere(caller: Caller, answer: Answer, claim: Claim) -> dict[str, str]:
    path = f"/answers/{answer.public_id}/mark/"
    return {
        "page": _status(
            caller.browser.post(path, {"helpful": "yes"}, headers={"HX-Request": "true"}).status_code
        ),
        "api": _status(
            caller.script.post(f"/api{path[:-1]}", {"helpful": True}, "application/json").status_code
        ),
    }


def report_everywhere(caller: Caller, answer: Answer, claim: Claim) -> dict[str, str]:
    path = f"/answers/{answer.public_id}/claims/{claim.pk}/report/"
    return {
        "page": _status(
            caller.browser.post(path, {"note": "No."}, headers={"HX-Request": "true"}).status_code
        ),
        "api": _status(
            caller.script.post(f"/api{path[:-1]}", {"note": "No."}, "application/json").status_code
        ),
    }


def check_everywhere(caller: Caller) -> dict[str, str]:
    text = f"{STATION_QUOTE} It was pulled by a steam engine."
    return {
        "api": _status(caller.script.post("/api/check", {"text": text}, "application/json").status_code),
        "mcp": _tool(lambda: caller.agent.check(text)),
    }


def read_everywhere(caller: Caller) -> dict[str, str]:
    title = Article.objects.get(slug=ARTICLE).title
    return {
        "page": _status(caller.browser.get(f"/articles/{ARTICLE}/").status_code),
        "mcp": _tool(lambda: caller.agent.read_article(title=title)),
    }


def _situation(situation: str, settings: Any) -> Caller:
    """A caller in `situation`: a reader; an account with no role where visitors may not ask or check; a reader
    over the rate limit."""
    settings.ANONYMOUS_CAN_ASK = settings.ANONYMOUS_CAN_CHECK = False
    if situation == "no role":
        user, browser = member("norole", "reader")
        user.groups.clear()
        return Caller(user, browser)
    if situation == "limited":
        settings.RATE_LIMIT_PER_USER = 0
    return Caller(*member("alice", "reader"))


@pytest.mark.parametrize(
    ("situation", "expected"),
    [("reader", ALLOWED), ("no role", REFUSED), ("limited", LIMITED)],
)
def test_asking_and_checking_give_one_outcome_on_every_surface(situation, expected, settings):
    caller = _situation(situation, settings)
    assert set(ask_everywhere(caller).values()) == {expected}
    assert set(check_everywhere(caller).values()) == {expected}


@pytest.mark.parametrize(
    ("action", "situation", "expected"),
    [
        (verdict_everywhere, "reader", ALLOWED),
        (verdict_everywhere, "no role", REFUSED),
        (verdict_everywhere, "withheld", NOT_SHOWN),
        (mark_everywhere, "reader", ALLOWED),
        (mark_everywhere, "no role", REFUSED),
        (mark_everywhere, "withheld", NOT_SHOWN),
        (mark_everywhere, "limited", LIMITED),
        (report_everywhere, "reader", ALLOWED),
        (report_everywhere, "no role", REFUSED),
        (report_everywhere, "withheld", NOT_SHOWN),
        (report_everywhere, "limited", LIMITED),
    ],
)
def test_an_answer_s_actions_give_one_outcome_on_every_surface(action, situation, expected, settings):
    answer, claim = _answer()
    caller = _situation(situation, settings)
    if situation == "withheld":
        _withhold_sources(answer)
    outcomes = action(caller, answer, claim)
    assert set(outcomes.values()) == {expected}, outcomes
    if expected == ALLOWED and action is report_everywhere:
        assert claim.reports.count() == 1  # one report, the reader's own: the second replaced the first


def test_reading_an_article_gives_one_outcome_on_every_surface(settings):
    caller = _situation("reader", settings)
    assert set(read_everywhere(caller).values()) == {ALLOWED}
    Article.objects.filter(slug=ARTICLE).update(withheld_at=timezone.now())
    assert set(read_everywhere(caller).values()) == {NOT_SHOWN}


def test_an_answer_withheld_as_it_is_read_is_shown_on_no_surface(monkeypatch, settings):
    from dashboard.actions.asking import ask as real_ask

    def ask_then_withhold(*args: Any, **kwargs: Any) -> Answer:
        Article.objects.update(withheld_at=None)  # (each surface's question finds the notes again)
        answer = real_ask(*args, **kwargs)
        _withhold_sources(answer)
        return answer

    monkeypatch.setattr("dashboard.actions.asking.ask", ask_then_withhold)
    caller = _situation("reader", settings)
    outcomes = ask_everywhere(caller) | {"command": _command(STATION_QUESTION, caller.user.get_username())}
    assert set(outcomes.values()) == {NOT_SHOWN}, outcomes


def test_a_spent_budget_reads_alike_on_every_surface(claude, settings):
    settings.VERIFIER_DAILY_BUDGET_USD = 0
    caller = _situation("reader", settings)
    outcomes = ask_everywhere(caller) | {"command": _command(STATION_QUESTION, caller.user.get_username())}
    assert set(outcomes.values()) == {OVER_BUDGET}, outcomes
    assert claude.request_count == 0


def test_a_follow_up_gives_one_outcome_on_every_surface(settings):
    caller, other = _situation("reader", settings), Caller(*member("bob", "reader"))
    theirs = other.agent.ask(STATION_QUESTION)["conversation"]
    mine = caller.agent.ask(STATION_QUESTION)["conversation"]

    def follow_up(conversation: str) -> dict[str, str]:
        question = "And when did the second one leave?"
        api = caller.script.post(
            "/api/ask", {"question": question, "conversation": conversation}, "application/json"
        )
        page = caller.browser.post("/", {"question": question, "conversation": conversation}, follow=True)
        return {
            "page": _page(page),
            "api": _status(api.status_code),
            "mcp": _tool(lambda: caller.agent.ask(question, conversation)),
        }

    assert set(follow_up(mine).values()) == {ALLOWED}
    assert set(follow_up(theirs).values()) == {NOT_SHOWN}  # another reader's conversation is as none
