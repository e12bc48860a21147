"""The daily judge budget counts every Claude call, whatever it was for: answers, fact-checks, batch scoring."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.factories import STATION_QUOTE, login, verified_by_claude, verify_station_answer
from tests.fakes.messages_api import FakeMessagesAPI
from verifier.models import JudgeSpend, SpendPurpose
from verifier.panel import BUDGET_SPENT
from verifier.services import spent_today

pytestmark = pytest.mark.django_db


def test_fact_checks_spend_from_the_daily_budget_and_then_answers_are_judged_locally(
    client, claude: FakeMessagesAPI, settings
) -> None:
    claude.set_default(verified_by_claude(STATION_QUOTE))
    settings.VERIFIER_DAILY_BUDGET_USD = 0.001  # less than one juror call (900 + 60 tokens)

    checked = client.post("/api/check", {"text": STATION_QUOTE}, content_type="application/json")
    assert checked.status_code == 200
    calls = claude.request_count
    assert calls >= 1
    [spend] = JudgeSpend.objects.all()
    assert spend.purpose == SpendPurpose.CHECK
    assert (spend.input_tokens, spend.output_tokens) == (900 * calls, 60 * calls)
    assert spent_today() == spend.cost_usd > 0

    verification = verify_station_answer()
    assert claude.request_count == calls  # the fact-check used up the budget: no further Claude call
    assert verification.local_only and verification.disclosure == BUDGET_SPENT
    assert JudgeSpend.objects.count() == 1

    login(client, "operator")
    logs = client.get("/operators/logs/").content.decode()
    assert f"${spend.cost_usd:.4f} of $0.00 daily budget" in logs
    assert "budget spent: the panel runs local-only" in logs


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

    [spend] = JudgeSpend.objects.all()
    assert spend.purpose == SpendPurpose.BATCH and spend.input_tokens == 900 * claude.request_count
    assert spent_today() == spend.cost_usd > 0


def test_verifications_record_their_spend_once_each(claude: FakeMessagesAPI) -> None:
    claude.set_default(verified_by_claude(STATION_QUOTE))
    first, second = verify_station_answer(), verify_station_answer()

    spends = list(JudgeSpend.objects.order_by("created_at"))
    assert [s.purpose for s in spends] == [SpendPurpose.VERIFICATION] * 2
    assert [s.cost_usd for s in spends] == [first.cost_usd, second.cost_usd]
    assert spent_today() == first.cost_usd + second.cost_usd


@pytest.mark.django_db(transaction=True)
def test_upgrading_keeps_what_verifications_already_spent_today() -> None:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = (
        [("verifier", "0002_judge_reviews_critics_and_verify_all")],
        [("verifier", "0003_judge_spend")],
    )
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    answer = old.get_model("garden", "Answer").objects.create(
        question=old.get_model("garden", "Question").objects.create(text="Q?"), text="A."
    )
    old.get_model("verifier", "Verification").objects.create(
        answer=answer, input_tokens=900, output_tokens=60, cost_usd=Decimal("0.0012")
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(after)

    [spend] = JudgeSpend.objects.all()
    assert (spend.purpose, spend.input_tokens, spend.cost_usd) == ("verification", 900, Decimal("0.0012"))
    assert spent_today() == Decimal("0.0012")
