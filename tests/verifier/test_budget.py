"""The daily judge budget counts every Claude call, whatever it was for, and is a limit calls never pass."""

from __future__ import annotations

import json
import threading
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from tests.factories import STATION_QUOTE, login, verified_by_claude, verify_station_answer
from tests.fakes.messages_api import FakeMessagesAPI
from verifier.budget import DailyBudget, spent_today
from verifier.logs import spend_today
from verifier.models import JudgeSpend, SpendPurpose
from verifier.panel import BUDGET_SPENT

pytestmark = pytest.mark.django_db


def test_fact_checks_spend_from_the_daily_budget_and_then_answers_are_judged_locally(
    client, claude: FakeMessagesAPI, settings
) -> None:
    # A long fact-check: 45,000 input tokens on the juror cost $0.0453 of the $0.05 budget.
    claude.set_default(verified_by_claude(STATION_QUOTE, input_tokens=45_000))
    settings.VERIFIER_DAILY_BUDGET_USD = 0.05

    checked = client.post("/api/check", {"text": STATION_QUOTE}, content_type="application/json")
    assert checked.status_code == 200
    assert claude.request_count == 1
    [spend] = JudgeSpend.objects.all()
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
    assert JudgeSpend.objects.count() == 1

    login(client, "operator")
    logs = client.get("/operators/logs/").content.decode()
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

    spends = list(JudgeSpend.objects.all())
    assert len(spends) == claude.request_count >= 1
    assert {s.purpose for s in spends} == {SpendPurpose.BATCH}
    assert sum(s.input_tokens for s in spends) == 900 * claude.request_count
    assert spent_today() == sum(s.cost_usd for s in spends) > 0


def test_verifications_record_each_call_they_make(claude: FakeMessagesAPI) -> None:
    claude.set_default(verified_by_claude(STATION_QUOTE))
    first, second = verify_station_answer(), verify_station_answer()

    spends = list(JudgeSpend.objects.all())
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
    assert JudgeSpend.objects.filter(settled=False).count() == 3  # in flight, at their most


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

    [spend] = JudgeSpend.objects.all()
    assert (spend.purpose, spend.input_tokens, spend.cost_usd) == ("verification", 900, Decimal("0.0012"))
    assert spent_today() == Decimal("0.0012")
    assert spend_today().held_local == 1  # the answer the budget kept from Claude still counts
