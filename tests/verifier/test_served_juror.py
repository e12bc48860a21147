"""A juror served over the OpenAI API (`OPENAI_JUROR_MODEL`), through the real `openai` SDK and a local fake chat
completions server: it votes after the local judge in strict JSON, its quotes pass the same gate, the verdict's
disclosure names it, Claude breaks its ties when there is a key, and when it fails the local verdict stands,
saying so."""

from __future__ import annotations

import json

import pytest

from claimcheck.judges.claude import QUESTION_PROMPT, SYSTEM_PROMPT, TOOL_NAME
from claimcheck.panel import NO_TIEBREAKER, SERVED_JUROR
from claimcheck.terms import Flag
from tests.factories import STATION_QUOTE, verified_by_claude, verify_station_answer
from tests.fakes import chat_completions as chat
from tests.fakes.messages_api import Behaviour, FakeMessagesAPI, malformed

pytestmark = pytest.mark.django_db

JUROR = "fake-qwen-2.5-judge"


@pytest.fixture
def juror(settings: pytest.FixtureRequest, fake_chat_api: chat.FakeChatAPI) -> chat.FakeChatAPI:
    """A served juror at the fake chat completions API; no Claude key unless a test asks for `claude` too."""
    settings.OPENAI_JUROR_MODEL = JUROR  # type: ignore[attr-defined]
    settings.OPENAI_BASE_URL = fake_chat_api.base_url  # type: ignore[attr-defined]
    settings.OPENAI_TIMEOUT_SECONDS = 2.0  # type: ignore[attr-defined]
    settings.OPENAI_MAX_RETRIES = 1  # type: ignore[attr-defined]
    return fake_chat_api


def vote(quote: str, *, status: str = "verified", confidence: float = 0.97) -> Behaviour:
    """The served juror's reply: the one claim's verdict as the JSON its schema asks for."""
    verdict = {
        "claim_number": 1,
        "status": status,
        "quote": quote,
        "source_number": 1,
        "confidence": confidence,
        "flags": [],
    }
    return chat.completion(json.dumps({"verdicts": [verdict], "answers_question": True}), prompt_tokens=700)


def test_the_served_juror_votes_after_the_local_judge_and_the_disclosure_names_it(
    juror: chat.FakeChatAPI,
) -> None:
    juror.enqueue(vote(STATION_QUOTE))

    verification = verify_station_answer()

    [claim] = verification.claims.filter(is_claim=True)
    assert list(claim.votes.order_by("pk").values_list("judge", flat=True)) == ["local", JUROR]
    assert claim.status == "verified" and claim.quote == STATION_QUOTE
    assert verification.disclosure == SERVED_JUROR.format(model=JUROR) and JUROR in verification.disclosure
    assert verification.judge_errors == "" and verification.verdict == "grounded"
    sent = juror.last_request["body"]
    assert sent["model"] == JUROR and sent["messages"][0] == {
        "role": "system",
        "content": SYSTEM_PROMPT + QUESTION_PROMPT,
    }
    schema = sent["response_format"]
    assert schema["type"] == "json_schema" and schema["json_schema"]["strict"] is True
    assert schema["json_schema"]["name"] == TOOL_NAME
    assert set(schema["json_schema"]["schema"]["properties"]) == {"verdicts", "answers_question"}


def test_an_invented_quote_from_the_served_juror_is_caught_by_the_quote_gate(juror: chat.FakeChatAPI) -> None:
    juror.enqueue(vote("The first train left Ashcombe on 3 May 1981, cheered by 5,000 people."))

    verification = verify_station_answer()

    [claim] = verification.claims.filter(is_claim=True)
    served = claim.votes.get(judge=JUROR)
    assert served.status == "unverified" and Flag.QUOTE_NOT_FOUND in served.flags
    assert claim.quote in ("", STATION_QUOTE)  # the reader is never shown the invented quote


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (chat.status(500), "server_error"),
        (chat.status(429, headers={"retry-after": "0"}), "rate_limited"),
        (malformed(b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess'), "malformed"),
        (chat.completion("Sure! The claim is verified by source 1."), "malformed"),  # not the JSON asked for
        (None, "connection"),
    ],
    ids=["500", "429", "malformed-body", "not-json", "server-down"],
)
def test_a_failing_served_juror_leaves_the_local_verdict_saying_so(
    juror: chat.FakeChatAPI, settings: pytest.FixtureRequest, fault: Behaviour | None, kind: str
) -> None:
    if fault is None:
        juror.close()  # nothing listens at its address any more
    else:
        juror.set_default(fault)

    verification = verify_station_answer()

    assert verification.disclosure.startswith(
        f"Only the weaker local judge ran: the served juror {JUROR} failed"
    )
    assert f"{JUROR}: {kind}: " in verification.judge_errors
    [claim] = verification.claims.filter(is_claim=True)
    assert claim.status == "verified" and claim.quote == STATION_QUOTE  # the local judge's verdict stands
    assert list(claim.votes.values_list("judge", flat=True)) == ["local"]


def test_a_claim_the_served_juror_is_unsure_of_goes_to_claude_s_tie_breaker(
    juror: chat.FakeChatAPI, claude: FakeMessagesAPI, settings: pytest.FixtureRequest
) -> None:
    juror.enqueue(vote(STATION_QUOTE, confidence=0.3))
    claude.enqueue(verified_by_claude(STATION_QUOTE))

    verification = verify_station_answer()

    [claim] = verification.claims.filter(is_claim=True)
    judges = list(claim.votes.order_by("pk").values_list("judge", flat=True))
    assert judges == ["local", JUROR, settings.CLAUDE_TIEBREAKER_MODEL]  # type: ignore[attr-defined]
    assert claude.request_count == 1 and juror.request_count == 1  # Claude only breaks the tie


def test_without_a_claude_key_an_unsure_served_juror_keeps_the_more_cautious_vote(
    juror: chat.FakeChatAPI,
) -> None:
    juror.enqueue(vote(STATION_QUOTE, status="inferred", confidence=0.3))

    verification = verify_station_answer()

    assert verification.disclosure == NO_TIEBREAKER.format(model=JUROR)
    [claim] = verification.claims.filter(is_claim=True)
    assert claim.status == "inferred"  # more cautious than the local judge's verified
