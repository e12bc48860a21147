"""Whether an answer answers its question, on every face: a grounded answer whose check found it does not answer
is shown as "Does not answer the question" (amber, in words), never as grounded and never with ✓, on its page,
in its compact line, in the logs, in the API, the MCP tools and `ask`; one that answers shows as it always has."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from dashboard.actions.callers import account_request
from dashboard.management.commands.ask import NOT_ANSWERED
from dashboard.mcp_server import GardenTools
from tests.factories import (
    LIFT_QUESTION,
    STEP_FREE_QUOTE,
    login,
    verify_station_answer,
    verify_step_free_answer,
)
from tests.fakes.messages_api import Behaviour, FakeMessagesAPI, reply_text, reply_tool
from verifier.logs import DOES_NOT_ANSWER as NOT_ANSWERING_FILTER
from verifier.models import Verification
from verifier.roles import READER
from verifier.selectors import ANSWERS_QUESTION, DOES_NOT_ANSWER
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

NOT_ANSWERED_LINE = "[Hall: ~ · does not answer · 50/100 · local judge · 0 flags]"


@pytest.fixture
def keyless(settings: Any) -> None:
    settings.ANTHROPIC_API_KEY = ""


def verdict_section(html: str) -> str:
    start = html.index('<section id="verdict-')
    return html[start : html.index("</section>", start)]


def words_of(html: str) -> str:
    """What a reader reads of some HTML: its text, without tags or attributes."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", html))


def test_a_grounded_answer_that_does_not_answer_says_so_on_its_page_never_grounded_nor_a_tick(
    keyless: None, client: Client
) -> None:
    verification = verify_step_free_answer()
    assert verification.verdict == "grounded" and verification.compact == NOT_ANSWERED_LINE

    html = client.get(verification.answer.get_absolute_url()).content.decode()
    section = verdict_section(html)
    assert 'class="verdict-line risk-label-mixed"' in section  # amber
    assert f"~ {DOES_NOT_ANSWER}" in words_of(section) and NOT_ANSWERED_LINE in section
    assert "✓" not in html and "grounded" not in words_of(section).lower()
    # Above the answer too, in words: its claims are checked, and still it does not answer.
    text = html[html.index('<div id="answer-text-') : html.index('<p class="answer-text">')]
    assert 'class="banner abstained"' in text and f"{DOES_NOT_ANSWER}. The judge found" in words_of(text)
    assert "[Verified]" in html  # its claim is in the notes, and says so

    polled = client.get(
        f"/answers/{verification.answer.public_id}/verdict/", headers={"HX-Request": "true"}
    ).content.decode()
    assert f"~ {DOES_NOT_ANSWER}" in words_of(polled) and "✓" not in polled


def test_a_grounded_answer_that_answers_shows_as_it_always_has(keyless: None, client: Client) -> None:
    verification = verify_station_answer()
    assert verification.compact.startswith("[Hall: ✓ · ") and "does not answer" not in verification.compact
    html = client.get(verification.answer.get_absolute_url()).content.decode()
    section = verdict_section(html)
    assert "✓ grounded" in words_of(section) and "verdict Grounded" in words_of(section)
    assert DOES_NOT_ANSWER not in html

    body = client.get(f"/api/answers/{verification.answer.public_id}").json()
    assert body["answers_question"] is True and body["answers_question_label"] == ANSWERS_QUESTION
    verdict = client.get(f"/api/answers/{verification.answer.public_id}/verdict").json()
    assert (verdict["answers_question"], verdict["risk_label"]) == (True, "✓")


def test_the_api_and_the_mcp_tools_say_it_does_not_answer(keyless: None, client: Client) -> None:
    verification = verify_step_free_answer()
    answer_id = str(verification.answer.public_id)
    body = client.get(f"/api/answers/{answer_id}").json()
    assert (body["answers_question"], body["answers_question_label"]) == (False, DOES_NOT_ANSWER)
    assert body["abstained"] is False and body["verification"]["risk_label"] == "~"
    verdict = client.get(f"/api/answers/{answer_id}/verdict").json()
    assert (verdict["answers_question"], verdict["answers_question_label"]) == (False, DOES_NOT_ANSWER)
    assert (verdict["risk_label"], verdict["risk_score"], verdict["compact"]) == ("~", 50, NOT_ANSWERED_LINE)

    agent = User.objects.create_user("agent", password="x")
    agent.groups.add(Group.objects.get(name=READER))
    tools = GardenTools(account_request(agent))
    assert {key: value for key, value in tools.verdict(answer_id).items() if key != "wait"} == verdict

    schema = client.get("/api/openapi.json").json()["components"]["schemas"]
    for shape in ("AnswerOut", "VerdictOut"):
        assert "did not find" in schema[shape]["properties"]["answers_question"]["description"]


def test_the_logs_say_it_and_list_it_apart_from_the_grounded(keyless: None, client: Client) -> None:
    answering, not_answering = verify_station_answer(), verify_step_free_answer()
    login(client, "operator")
    logs = client.get("/operators/logs/").content.decode()
    row = logs[logs.index(not_answering.answer.get_absolute_url()) :]
    row = row[: row.index("</tr>")]
    assert f'<span class="does-not-answer">{DOES_NOT_ANSWER}</span>' in row and "~ 50/100" in row
    assert "Grounded" not in row and "✓" not in row

    def listed(verdict: str) -> set[int]:
        page = client.get("/operators/logs/", {"verdict": verdict}).content.decode()
        return {v.answer.pk for v in (answering, not_answering) if v.answer.get_absolute_url() in page}

    assert listed(NOT_ANSWERING_FILTER) == {not_answering.answer.pk}
    assert listed("grounded") == {answering.answer.pk}


# Claude writes an answer near LIFT_QUESTION (from the step-free passage, wherever it is among the sources); its
# juror finds the claim verified, and that it does not answer the question.


def source_with(text: str, step_free: str = "step-free") -> int:
    """The number of the source of a request's text that holds `step_free`."""
    for number, block in re.findall(r'<source number="(\d+)"[^>]*>\n(.*?)</source>', text, re.DOTALL):
        if step_free in block:
            return int(number)
    raise AssertionError("no source holds the step-free passage")


def near_but_not_answering(body: dict[str, Any]) -> Behaviour:
    content = body["messages"][0]["content"]
    if isinstance(content, str):  # the answer writer's request
        return reply_text(f"{STEP_FREE_QUOTE.removesuffix('.')} [{source_with(content)}].")
    verdict = {
        "claim_number": 1,
        "status": "verified",
        "quote": STEP_FREE_QUOTE,
        "source_number": source_with(content[0]["text"]),
        "confidence": 0.97,
        "flags": [],
    }
    return reply_tool("record_claim_verdicts", {"verdicts": [verdict], "answers_question": False})


def test_ask_json_and_its_text_say_it_does_not_answer(
    claude: FakeMessagesAPI, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    claude.set_default(near_but_not_answering)

    def worker_finishes_meanwhile(seconds: float) -> None:
        for verification in Verification.objects.filter(status="pending"):
            verification_run(verification_id=verification.pk)

    monkeypatch.setattr("dashboard.management.commands.ask.time.sleep", worker_finishes_meanwhile)
    call_command("ask", LIFT_QUESTION, "--json", "--wait")
    payload = json.loads(capsys.readouterr().out)
    assert (payload["answers_question"], payload["answers_question_label"]) == (False, DOES_NOT_ANSWER)
    verdict = payload["verification"]
    assert verdict["status"] == "done" and verdict["claims"][0]["status"] == "verified"
    assert (verdict["answers_question"], verdict["risk_label"]) == (False, "~")
    assert verdict["compact"] == "[Hall: ~ · does not answer · 50/100 · 2 judges · 0 flags]"

    call_command("ask", LIFT_QUESTION, "--wait")
    out = capsys.readouterr().out
    assert f"{DOES_NOT_ANSWER.upper()}: {NOT_ANSWERED}" in out
    assert (
        "[Hall: ~ · does not answer · 50/100 · 2 judges · 0 flags] verdict: does not answer the question"
        in out
    )
    assert "grounded" not in out.lower() and "✓" not in out


def test_the_mcp_ask_tool_says_it_once_checked(claude: FakeMessagesAPI) -> None:
    claude.set_default(near_but_not_answering)
    agent = User.objects.create_user("agent", password="x")
    agent.groups.add(Group.objects.get(name=READER))
    tools = GardenTools(account_request(agent))
    asked = tools.ask(LIFT_QUESTION)
    # Until its check is done, nothing has found otherwise.
    assert asked["answers_question"] is True and asked["verdict"]["status"] == "pending"
    verification_run(verification_id=Verification.objects.get(answer__public_id=asked["answer_id"]).pk)
    verdict = tools.verdict(asked["answer_id"])
    assert (verdict["answers_question"], verdict["answers_question_label"]) == (False, DOES_NOT_ANSWER)
    assert verdict["compact"].startswith("[Hall: ~ · does not answer · ")
