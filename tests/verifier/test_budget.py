"""The daily Claude budget counts every Claude call, answers and judgements, and is a limit calls never pass."""

from __future__ import annotations

import json
import threading
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils.html import escape

from claimcheck.panel import BUDGET_SPENT
from claimcheck.terms import JudgeMode
from garden.answering.asking import question_ask
from garden.answering.synthesis import BUDGET_SPENT as BUDGET_SPENT_ANSWER
from garden.models import Answer, Generator
from providers.claude import DEFAULT_PRICES, cost_usd
from tests.factories import STATION_QUOTE, login, page_text, verified_by_claude, verify_station_answer
from tests.fakes.messages_api import FakeMessagesAPI, reply_text, status
from verifier.budget import DailyBudget, spent_today
from verifier.logs import spending_summary
from verifier.models import Spend, SpendPurpose, Verification
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db


def test_fact_checks_spend_from_the_daily_budget_and_then_answers_are_judged_locally(
    client, claude: FakeMessagesAPI, settings
) -> None:
    # A long fact-check: 45,000 input tokens on the juror cost $0.0453 of the $0.05 budget.
    claude.set_default(verified_by_claude(STATION_QUOTE, input_tokens=45_000))
    settings.VERIFIER_DAILY_BUDGET_USD = 0.05

    login(client, "reader")
    checked = client.post("/api/check", {"text": STATION_QUOTE}, content_type="application/json")
    assert checked.status_code == 200
    assert claude.request_count == 1
    [spend] = Spend.objects.all()
    assert (spend.purpose, spend.model, spend.settled) == (
        SpendPurpose.CHECK,
        settings.CLAUDE_JUROR_MODEL,
        True,
    )
    assert (spend.input_tokens, spend.output_tokens, spend.cost_usd) == (45_000, 60, Decimal("0.0453"))
    assert spent_today() == spend.cost_usd

    # What is left ($0.0047) cannot cover the most a juror call on an answer could cost: no further call.
    verification = verify_station_answer()
    assert claude.request_count == 1
    assert verification.local_only and verification.disclosure == BUDGET_SPENT
    assert Spend.objects.count() == 1

    client.logout()
    login(client, "operator")
    logs = page_text(client.get("/operators/logs/").content.decode())
    assert "$0.0453 of $0.05 daily budget (fact-checking text $0.0453)" in logs
    assert "budget spent: the panel runs local-only" in logs
    assert "(1 answer judged without Claude or its tie-breaker)" in logs


def test_batch_scoring_with_claude_spends_from_the_same_budget(
    claude: FakeMessagesAPI, tmp_path: Path
) -> None:
    claude.set_default(verified_by_claude("The Eiffel Tower opened in Paris in 1889."))
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps(
            {"id": "a", "source": "The Eiffel Tower opened in Paris in 1889.", "text": "It opened in 1889."}
        )
        + "\n"
    )
    call_command(
        "check_text", "--jsonl", str(items), "--out", str(tmp_path / "out.jsonl"), "--judge", "claude"
    )

    spends = list(Spend.objects.all())
    assert len(spends) == claude.request_count >= 1
    assert {s.purpose for s in spends} == {SpendPurpose.BATCH}
    assert sum(s.input_tokens for s in spends) == 900 * claude.request_count
    assert spent_today() == sum(s.cost_usd for s in spends) > 0


def test_verifications_record_each_call_they_make(claude: FakeMessagesAPI) -> None:
    claude.set_default(verified_by_claude(STATION_QUOTE))
    first, second = verify_station_answer(), verify_station_answer()

    spends = list(Spend.objects.all())
    assert len(spends) == claude.request_count >= 2
    assert {s.purpose for s in spends} == {SpendPurpose.VERIFICATION}
    assert all(s.settled for s in spends)
    assert spent_today() == first.cost_usd + second.cost_usd > 0


@pytest.mark.django_db(transaction=True)
def test_workers_booking_at_the_same_moment_never_pass_the_daily_limit(settings) -> None:
    settings.VERIFIER_DAILY_BUDGET_USD = 0.10
    budget = DailyBudget(SpendPurpose.VERIFICATION)
    workers = 8
    start = threading.Barrier(workers)
    booked: list[bool] = []

    def worker() -> None:
        try:
            start.wait()
            booked.append(budget.book("claude-haiku-5-5", Decimal("0.03")) is not None)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert booked.count(True) == 3  # 3 x $0.03 fit in $0.10; a fourth would pass it
    assert spent_today() == Decimal("0.09")
    assert Spend.objects.filter(settled=False).count() == 3  # in flight, at their most


@pytest.mark.django_db(transaction=True)
def test_upgrading_keeps_what_verifications_already_spent_and_held_back_today() -> None:
    from django.db.migrations.executor import MigrationExecutor

    before = [("verifier", "0002_judge_reviews_critics_and_verify_all")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    answer = old.get_model("garden", "Answer").objects.create(
        question=old.get_model("garden", "Question").objects.create(text="Q?"), text="A."
    )
    old.get_model("verifier", "Verification").objects.create(
        answer=answer, input_tokens=900, output_tokens=60, cost_usd=Decimal("0.0012")
    )
    held = old.get_model("garden", "Answer").objects.create(
        question=old.get_model("garden", "Question").objects.create(text="Q2?"), text="A2."
    )
    old.get_model("verifier", "Verification").objects.create(answer=held, disclosure=BUDGET_SPENT)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # up to the latest migration of every app

    [spend] = Spend.objects.all()
    assert (spend.purpose, spend.input_tokens, spend.cost_usd) == ("verification", 900, Decimal("0.0012"))
    assert spent_today() == Decimal("0.0012")
    assert spending_summary().held_local == 1  # the answer the budget kept from Claude still counts


ANSWER_QUESTION = "How long is the Harrowden Viaduct and how many arches does it have?"
ANSWER_TEXT = "The viaduct is 196 m long [1]."


def test_answers_claude_writes_are_booked_and_settled_in_the_judges_ledger(
    client, claude: FakeMessagesAPI, settings
) -> None:
    # 2,000 input and 100 output tokens on the answer model (sonnet: $3 and $15 a million) cost $0.0075.
    claude.reply_text(ANSWER_TEXT, input_tokens=2_000, output_tokens=100)

    login(client, "reader")  # a signed-in reader's: anonymous visitors' answers are local by default
    body = client.post("/api/ask", {"question": ANSWER_QUESTION}, content_type="application/json").json()
    assert body["answer"] == ANSWER_TEXT and body["generator"] == "claude" and body["budget_held"] is False
    [spend] = Spend.objects.all()
    assert (spend.purpose, spend.model, spend.settled) == (
        SpendPurpose.ANSWER,
        settings.CLAUDE_ANSWER_MODEL,
        True,
    )
    assert (spend.input_tokens, spend.output_tokens, spend.cost_usd) == (2_000, 100, Decimal("0.0075"))
    assert Answer.objects.get().cost_usd == spend.cost_usd == spent_today()

    login(client, "operator")
    logs = page_text(client.get("/operators/logs/").content.decode())
    assert "$0.0075 of $5.00 daily budget (writing answers $0.0075)" in logs


bookings: list[Decimal] = []


def recording_budget(*, anonymous: bool = False) -> DailyBudget:
    """The answers' budget, noting what each answer books (wired in as ANSWER_BUDGET)."""

    class Recording(DailyBudget):
        def book(self, model: str, most: Decimal) -> Spend | None:
            bookings.append(most)
            return super().book(model, most)

    return Recording(SpendPurpose.ANSWER, anonymous=anonymous)


def test_an_answer_books_the_most_it_can_cost_before_the_call(claude: FakeMessagesAPI, settings) -> None:
    settings.ANSWER_BUDGET = "tests.verifier.test_budget.recording_budget"
    bookings.clear()
    claude.reply_text(ANSWER_TEXT)
    question_ask(text=ANSWER_QUESTION)

    request = claude.last_request["body"]
    sent_bytes = len(json.dumps(request).encode())
    most = cost_usd(settings.CLAUDE_ANSWER_MODEL, sent_bytes, request["max_tokens"], DEFAULT_PRICES)
    assert bookings == [bookings[0]] and bookings[0] >= most > 0
    [spend] = Spend.objects.all()
    assert spend.settled and spend.cost_usd == Decimal("0.000156")  # 12 in and 8 out, as billed


def test_a_failed_answer_call_settles_at_what_it_was_billed(claude: FakeMessagesAPI) -> None:
    claude.set_default(status(400))
    answer = question_ask(text=ANSWER_QUESTION)
    assert answer.error and claude.request_count == 1
    assert not Spend.objects.exists() and spent_today() == 0  # no reply came: nothing was billed


def test_when_the_budget_cannot_cover_an_answer_the_local_synthesiser_writes_it_and_says_so(
    client, claude: FakeMessagesAPI, settings
) -> None:
    # The judge's fact-checks have left $0.001 of $0.05: less than the most an answer can cost.
    settings.VERIFIER_DAILY_BUDGET_USD = 0.05
    Spend.objects.create(purpose=SpendPurpose.CHECK, model="claude-haiku-5-5", cost_usd=Decimal("0.049"))

    login(client, "reader")
    page = client.post("/", {"question": ANSWER_QUESTION}, follow=True).content.decode()
    answer = Answer.objects.get()
    assert claude.request_count == 0
    assert (
        answer.generator == Generator.EXTRACTIVE and answer.budget_held and answer.text and not answer.error
    )
    assert escape(BUDGET_SPENT_ANSWER) in page
    api = client.get(f"/api/answers/{answer.public_id}").json()
    assert api["budget_held"] is True and api["generator"] == "extractive"
    assert Spend.objects.count() == 1 and spent_today() == Decimal("0.049")

    login(client, "operator")
    logs = page_text(client.get("/operators/logs/").content.decode())
    assert "answers are written by the local synthesiser (1 today)" in logs


def test_an_answer_written_with_budget_left_does_not_say_it_was_spent(
    client, claude: FakeMessagesAPI
) -> None:
    claude.reply_text(ANSWER_TEXT)
    login(client, "reader")
    page = client.post("/", {"question": ANSWER_QUESTION}, follow=True).content.decode()
    assert ANSWER_TEXT.removesuffix(" [1].") in page and escape(BUDGET_SPENT_ANSWER) not in page


def anonymous_ask(question: str = ANSWER_QUESTION) -> Answer:
    """A question asked through the API by a visitor who is not signed in; its answer."""
    body = Client().post("/api/ask", {"question": question}, content_type="application/json").json()
    return Answer.objects.select_related("question").get(public_id=body["answer_id"])


def test_with_no_allowance_an_anonymous_ask_makes_no_claude_call_at_all(
    client, claude: FakeMessagesAPI
) -> None:
    claude.reply_text(ANSWER_TEXT)
    claude.set_default(verified_by_claude("The viaduct is 196 m long."))

    answer = anonymous_ask()
    verification = verification_run(verification_id=Verification.objects.get(answer=answer).pk)
    assert verification is not None

    assert claude.requests == []  # neither the answer nor its check reached the Messages API
    assert answer.question.anonymous and answer.generator == Generator.EXTRACTIVE and answer.text
    assert not answer.budget_held  # no allowance is not a spent budget: nothing to apologise for
    assert verification.mode == JudgeMode.LOCAL and verification.judges == 1 and not verification.budget_held
    assert not Spend.objects.exists()

    login(client, "reader")  # the same question from a signed-in reader is written by Claude
    body = client.post("/api/ask", {"question": ANSWER_QUESTION}, content_type="application/json").json()
    assert body["generator"] == "claude" and claude.request_count == 1


def test_an_account_with_no_role_spends_as_a_visitor_does(client, claude: FakeMessagesAPI) -> None:
    claude.reply_text(ANSWER_TEXT)
    client.force_login(User.objects.create_user("no-role", password="x"))  # signed in, never given a role
    body = client.post("/api/ask", {"question": ANSWER_QUESTION}, content_type="application/json").json()
    answer = Answer.objects.select_related("question").get(public_id=body["answer_id"])
    assert answer.question.anonymous and answer.generator == Generator.EXTRACTIVE  # on the visitors' $0
    assert claude.requests == [] and not Spend.objects.exists()


def test_anonymous_asks_cannot_spend_the_signed_in_readers_share(
    client, claude: FakeMessagesAPI, settings
) -> None:
    # A $0.10 day of which visitors may spend $0.05. Each answer books the most it can cost (about $0.026) and
    # is billed $0.0075: on the shared budget alone, visitors' asks would leave less than one answer's most.
    settings.VERIFIER_DAILY_BUDGET_USD = 0.10
    settings.ANONYMOUS_CLAUDE_DAILY_USD = 0.05
    claude.set_default(reply_text(ANSWER_TEXT, input_tokens=2_000, output_tokens=100))

    answers = [anonymous_ask() for _ in range(12)]
    by_claude = [a for a in answers if a.generator == Generator.CLAUDE]
    held = [a for a in answers if a.budget_held]
    assert len(by_claude) >= 2 and held and len(by_claude) + len(held) == len(answers)
    assert answers.index(held[0]) == len(by_claude)  # once the allowance is spent, it stays spent
    assert claude.request_count == len(by_claude)
    assert spent_today(anonymous=True) == Decimal("0.0075") * len(by_claude)
    assert escape(BUDGET_SPENT_ANSWER) in Client().get(held[0].get_absolute_url()).content.decode()

    # Their answers' checks spend the same allowance: with it used up (by earlier checks, say), no juror call.
    rest = Decimal("0.05") - spent_today(anonymous=True)
    Spend.objects.create(purpose=SpendPurpose.VERIFICATION, anonymous=True, cost_usd=rest)
    verification = verification_run(verification_id=Verification.objects.get(answer=held[-1]).pk)
    assert verification is not None and verification.budget_held and verification.local_only
    assert claude.request_count == len(by_claude)

    login(client, "reader")
    body = client.post("/api/ask", {"question": ANSWER_QUESTION}, content_type="application/json").json()
    assert body["generator"] == "claude" and body["budget_held"] is False
    assert claude.request_count == len(by_claude) + 1
    [spend] = Spend.objects.filter(anonymous=False)
    assert spend.purpose == SpendPurpose.ANSWER and spend.cost_usd == Decimal("0.0075")

    login(client, "operator")
    logs = page_text(client.get("/operators/logs/").content.decode())
    assert (
        "<strong>By reader:</strong> signed-in readers and operators $0.0075 · visitors not signed in $0.0500, of an allowance of "
        f"$0.05 ({len(held)} of their answers kept from Claude by it)."
    ) in logs
    assert "budget spent: the panel runs local-only" not in logs  # the readers' budget is not spent


def test_the_logs_page_says_anonymous_answers_are_local_without_an_allowance(client, claude) -> None:
    claude.reply_text(ANSWER_TEXT)
    anonymous_ask()
    login(client, "operator")
    logs = page_text(client.get("/operators/logs/").content.decode())
    assert (
        "<strong>By reader:</strong> signed-in readers and operators $0.0000 · visitors not signed in $0.0000, of an allowance of "
        "$0.00: their answers are written and judged locally."
    ) in logs
