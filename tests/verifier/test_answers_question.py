"""Whether an answer answers its question, decided when it is verified: by the Claude juror when it judged the
claims, else by the local judge; a grounded answer that does not answer is never ✓."""

import pytest

from claimcheck.judges.claude import TOOL_NAME
from claimcheck.terms import RiskLabel
from garden.models import Passage, Question, SearchRule
from tests.factories import (
    STATION_ANSWER,
    STATION_QUESTION,
    STATION_QUOTE,
    STEP_FREE_QUOTE,
    answer_for,
    verified_by_claude,
    verify_station_answer,
    verify_step_free_answer,
)
from tests.fakes.messages_api import FakeMessagesAPI, reply_tool
from verifier.models import Verification
from verifier.queueing import verification_create
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db


def test_a_grounded_answer_to_its_question_keeps_its_tick(settings) -> None:
    settings.ANTHROPIC_API_KEY = ""
    verification = verify_station_answer()
    assert verification.answers_question is True and verification.verdict == "grounded"
    assert verification.risk_label == RiskLabel.GROUNDED
    assert verification.compact == f"[Hall: ✓ · {verification.risk_score}/100 · local judge · 0 flags]"


def test_a_grounded_answer_near_its_question_that_does_not_answer_it_is_never_a_tick(settings) -> None:
    settings.ANTHROPIC_API_KEY = ""
    verification = verify_step_free_answer()
    assert verification.answers_question is False
    # Its claim is in the notes: the verdict on the claims stands; the label and the score say it does not answer.
    assert verification.verdict == "grounded" and verification.claims.get(is_claim=True).status == "verified"
    assert (verification.risk_label, verification.risk_score) == (RiskLabel.MIXED, 50)
    assert verification.compact == "[Hall: ~ · does not answer · 50/100 · local judge · 0 flags]"


def juror_question(claude: FakeMessagesAPI) -> str:
    """The question the Claude juror was given, as its <question> block holds it."""
    text = claude.requests[0]["body"]["messages"][0]["content"][0]["text"]
    return str(text.split("<question>", 1)[1].split("</question>", 1)[0])


def test_the_claude_jurors_word_wins_over_the_local_judges(claude: FakeMessagesAPI) -> None:
    claude.set_default(verified_by_claude(STATION_QUOTE, answers_question=False))
    verification = verify_station_answer()  # the local judge would find it answered
    assert juror_question(claude) == STATION_QUESTION
    assert not verification.local_only and verification.answers_question is False
    assert verification.verdict == "grounded" and verification.risk_label == RiskLabel.MIXED
    assert verification.compact == "[Hall: ~ · does not answer · 50/100 · 2 judges · 0 flags]"

    claude.set_default(verified_by_claude(STEP_FREE_QUOTE, answers_question=True))
    assert verify_step_free_answer().answers_question is True  # the local judge would find it not answered


def test_a_juror_that_does_not_say_is_a_recorded_error_and_the_local_judge_decides(
    claude: FakeMessagesAPI,
) -> None:
    verdict = {
        "claim_number": 1,
        "status": "verified",
        "quote": STEP_FREE_QUOTE,
        "source_number": 1,
        "confidence": 0.97,
        "flags": [],
    }
    claude.set_default(reply_tool(TOOL_NAME, {"verdicts": [verdict]}))  # no `answers_question`
    verification = verify_step_free_answer()
    assert verification.local_only and "answers_question" in verification.judge_errors
    assert verification.disclosure.startswith("Only the weaker local judge ran")
    assert verification.answers_question is False and verification.risk_label == RiskLabel.MIXED


def test_a_follow_up_claude_condensed_is_judged_on_the_question_it_was_answered_as(
    claude: FakeMessagesAPI,
) -> None:
    claude.set_default(verified_by_claude(STATION_QUOTE))
    passage = Passage.objects.get(
        article__slug="station-ashcombe", revision__superseded=False, text__contains="first public train"
    )
    answer = answer_for(STATION_ANSWER, passage, question="And when did it leave?")
    Question.objects.filter(pk=answer.question_id).update(
        search_rule=SearchRule.CONDENSED, searched_for=STATION_QUESTION
    )
    verification = verification_create(answer=answer)
    assert verification is not None
    verification_run(verification_id=verification.pk)
    assert juror_question(claude) == STATION_QUESTION
    assert Verification.objects.get(pk=verification.pk).answers_question is True
