"""A verification whose Claude juror fails: retried with backoff where a retry can help, then a recorded judge
error, the local verdicts and the `?` label with its disclosure; an invented quote is caught by the quote gate;
a judge that crashes leaves a failed check scored as unsure (50, `?`)."""

from __future__ import annotations

import itertools

import pytest

from claimcheck.terms import Flag, RiskLabel
from tests.factories import STATION_QUOTE, verified_by_claude, verify_station_answer
from tests.fakes.messages_api import Behaviour, FakeMessagesAPI, delay, malformed, status
from verifier.models import Verification, VerificationStatus
from verifier.verifying import JUDGE_CRASHED

pytestmark = pytest.mark.django_db


@pytest.mark.slow  # real backoff between real retries, and replies timed out: about 12 s in all
@pytest.mark.parametrize(
    ("fault", "kind", "calls"),
    [
        (status(429, headers={"retry-after": "0"}), "rate_limited", 3),
        (status(500), "server_error", 3),
        (status(529), "server_error", 3),  # overloaded
        (delay(3.0), "timeout", 3),  # the client gives up after 2 s, each time
        (malformed(b'{"id": "msg_1", "type": "message", "content": [{"type": "tool_u'), "malformed", 1),
    ],
    ids=["429", "500", "529-overloaded", "timeout", "malformed-json"],
)
def test_a_failing_claude_juror_is_retried_then_recorded_and_the_verdict_labelled_unavailable(
    claude: FakeMessagesAPI, fault: Behaviour, kind: str, calls: int
) -> None:
    claude.set_default(fault)
    verification = verify_station_answer()

    assert (
        claude.request_count == calls
    )  # the call and CLAUDE_MAX_RETRIES (2) retries, when retrying can help
    gaps = [b["received_at"] - a["received_at"] for a, b in itertools.pairwise(claude.requests)]
    assert all(gap >= 0.2 for gap in gaps), gaps  # with a pause (backoff) before each retry
    assert verification.status == VerificationStatus.DONE
    assert f": {kind}: " in verification.judge_errors
    # The local judge's verdict stands, and so does its label: `?` is only for a check no judge finished.
    assert verification.verdict == "grounded" and verification.risk_label != RiskLabel.UNAVAILABLE
    assert " · local judge · " in verification.compact
    assert verification.disclosure.startswith("Only the weaker local judge ran: the Claude judge failed")
    [claim] = verification.claims.filter(is_claim=True)
    assert claim.status == "verified" and claim.quote == STATION_QUOTE  # the local judge's verdict stands
    assert list(claim.votes.values_list("judge", flat=True)) == ["local"]


def test_a_rate_limit_that_clears_on_retry_gives_a_full_verdict(claude: FakeMessagesAPI) -> None:
    claude.enqueue(status(429, headers={"retry-after": "0"}), verified_by_claude(STATION_QUOTE))
    verification = verify_station_answer()

    assert claude.request_count == 2
    assert verification.judge_errors == "" and verification.disclosure == ""
    assert verification.risk_label != RiskLabel.UNAVAILABLE
    assert verification.input_tokens == 900 and verification.cost_usd > 0


def test_an_invented_quote_from_claude_is_caught_by_the_quote_gate(claude: FakeMessagesAPI) -> None:
    invented = "The first train left Ashcombe on 3 May 1981, cheered by 5,000 people."
    claude.enqueue(verified_by_claude(invented), verified_by_claude(invented))  # juror, then tie-breaker
    verification = verify_station_answer()

    [claim] = verification.claims.filter(is_claim=True)
    claude_votes = claim.votes.exclude(judge="local")
    assert claude_votes and all(
        v.status == "unverified" and Flag.QUOTE_NOT_FOUND in v.flags for v in claude_votes
    )
    assert claim.status == "unverified" and claim.quote == ""  # the reader is shown no invented quote


def test_a_judge_that_crashes_leaves_a_failed_check_scored_50_judge_unavailable(client, monkeypatch) -> None:
    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the judge fell over")

    monkeypatch.setattr("verifier.checking.run_panel", crash)
    with pytest.raises(RuntimeError):
        verify_station_answer()  # raised again for the task's retry policy and the worker's log

    verification = Verification.objects.get()
    assert verification.status == VerificationStatus.ERROR and verification.error == JUDGE_CRASHED
    assert (verification.risk_score, verification.risk_label) == (50, RiskLabel.UNAVAILABLE)
    assert verification.compact == "[Hall: ? · 50/100 · 0 judges · 0 flags]"
    page = client.get(verification.answer.get_absolute_url()).content.decode()
    assert "The verification failed." in page and verification.compact in page and "judge unavailable" in page
    verdict = client.get(f"/api/answers/{verification.answer.public_id}/verdict").json()
    assert (verdict["status"], verdict["risk_score"], verdict["risk_label"]) == ("error", 50, "?")
    assert verdict["error"] == JUDGE_CRASHED
