"""The JSON API and the `ask` command give the same answer shape and the same clear errors; a quote the quote
gate turned down reaches editors and operators, never readers."""

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from claimcheck.terms import Flag
from garden.answering.asking import EMPTY_QUESTION
from tests.factories import STATION_ANSWER, STATION_QUOTE, login, verified_by_claude, verify_station_answer
from tests.fakes.messages_api import FakeMessagesAPI
from verifier.models import Verification
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

IN_SCOPE = "When did Ashcombe station reopen?"
OUT_OF_SCOPE = "How do I bake sourdough bread at home?"


def test_post_ask_then_get_the_answer(client):
    response = client.post("/api/ask", {"question": IN_SCOPE}, content_type="application/json")
    body = response.json()
    assert response.status_code == 200
    assert body["refused"] is False and body["answer"] and body["sources"]
    assert {"article", "title", "score"} <= set(body["sources"][0])
    assert body["preflight"]["risk"] == "HIGH" and body["preflight"]["domain"] == "factual"
    assert body["verification"]["status"] == "pending"

    again = client.get(f"/api/answers/{body['answer_id']}")
    assert again.status_code == 200 and again.json()["answer"] == body["answer"]

    verification_run(verification_id=Verification.objects.get(answer__public_id=body["answer_id"]).pk)
    checked = client.get(f"/api/answers/{body['answer_id']}").json()["verification"]
    assert checked["status"] == "done" and checked["verdict"] and checked["risk_label"]


def test_api_refusal_and_errors(client):
    refused = client.post("/api/ask", {"question": OUT_OF_SCOPE}, content_type="application/json").json()
    assert refused["refused"] is True and refused["refusal_reason"] and refused["sources"] == []
    empty = client.post("/api/ask", {"question": "  "}, content_type="application/json")
    assert empty.status_code == 400 and empty.json() == {"error": EMPTY_QUESTION}
    long = client.post("/api/ask", {"question": "y" * 2001}, content_type="application/json")
    assert long.status_code == 400 and "2,000" in long.json()["error"]
    assert client.get("/api/answers/987654").status_code == 404


# JSON can escape half of a surrogate pair ("\\udcff"); no database, tokenizer or UTF-8 encoder can hold one.


def test_a_question_with_half_a_surrogate_pair_is_answered_not_a_server_error(client):
    body = '{"question": "When did Ashcombe station reopen? \\udcff"}'
    response = client.post("/api/ask", body, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["question"] == "When did Ashcombe station reopen? \ufffd"


def test_a_text_with_half_a_surrogate_pair_is_checked_not_a_server_error(client):
    login(client, "reader")
    body = '{"text": "Ashcombe station reopened in 1990. \\udcff"}'
    response = client.post("/api/check", body, content_type="application/json")
    assert response.status_code == 200
    assert "\ufffd" in "".join(claim["text"] for claim in response.json()["claims"])


def test_openapi_schema_describes_the_endpoints(client):
    schema = client.get("/api/openapi.json").json()
    assert "/api/ask" in schema["paths"] and "/api/answers/{answer_id}" in schema["paths"]


def test_ask_command_prints_the_documented_json(capsys):
    call_command("ask", IN_SCOPE, "--json")
    payload = json.loads(capsys.readouterr().out)
    assert {"question_id", "refused", "refusal_reason", "answer", "sources", "preflight"} <= set(payload)
    assert {"domain", "risk", "suggestion"} <= set(payload["preflight"])
    assert payload["refused"] is False


def test_ask_command_waits_for_the_verdict_and_prints_each_claim(capsys, monkeypatch):
    def worker_finishes_meanwhile(seconds: float) -> None:
        for verification in Verification.objects.filter(status="pending"):
            verification_run(verification_id=verification.pk)

    monkeypatch.setattr("dashboard.management.commands.ask.time.sleep", worker_finishes_meanwhile)
    call_command("ask", IN_SCOPE, "--wait")
    out = capsys.readouterr().out
    verification = Verification.objects.get()
    assert "verification: done" in out
    assert f"{verification.compact} verdict: {verification.verdict}" in out
    for claim in verification.claims.filter(is_claim=True):
        assert f"[{claim.get_status_display()}] {claim.text}" in out
        if claim.quote:
            assert f"“{claim.quote}” [{claim.source_number}]" in out

    call_command("ask", IN_SCOPE, "--wait", "--json")
    payload = json.loads(capsys.readouterr().out)
    assert payload["verification"]["status"] == "done" and payload["verification"]["compact"]
    assert payload["verification"]["claims"][0]["status"]


def test_ask_command_refuses_empty_and_over_long_questions():
    with pytest.raises(CommandError, match=EMPTY_QUESTION):
        call_command("ask", "")
    with pytest.raises(CommandError, match="2,000 characters"):
        call_command("ask", "z" * 2001)


def test_ask_command_says_when_the_verdict_does_not_arrive(capsys):
    call_command("ask", IN_SCOPE, "--wait", "--timeout", "0.2")  # no worker runs in this test
    captured = capsys.readouterr()
    assert "verification: pending" in captured.out
    assert "did not arrive within 0.2 s. Is a Celery worker running?" in captured.err


def test_ask_command_waits_for_nothing_on_a_refusal(capsys):
    call_command("ask", OUT_OF_SCOPE, "--wait")
    captured = capsys.readouterr()
    assert "RETRIEVAL REFUSED" in captured.out and "verification: none" in captured.out
    assert captured.err == ""


@pytest.mark.parametrize("blank", ["\u0000", " \u0000\n", "\u001c\u0085"])
def test_a_text_the_services_would_find_blank_is_outside_the_schema_too(client, blank):
    """The fuzzer drew a question of one NUL: schema-valid, yet the garden rightly calls it empty. The schema
    now says what the services keep, so a client that follows it is never refused."""
    schema = client.get("/api/openapi.json").json()["components"]["schemas"]
    for name, field in [("AskIn", "question"), ("CheckIn", "text")]:
        assert re.search(schema[name]["properties"][field]["pattern"], blank) is None
        assert re.search(schema[name]["properties"][field]["pattern"], blank + "x") is not None
    response = client.post("/api/ask", {"question": blank}, content_type="application/json")
    assert (response.status_code, response.json()) == (400, {"error": EMPTY_QUESTION})


# A Claude juror steered by a note: it verifies the claim with a quote that is nowhere in the source, or with one
# that is there but says nothing of the claim.
TURNED_DOWN = [
    pytest.param(
        "The first train left Ashcombe on 3 May 1981, cheered by 5,000 people.",
        Flag.QUOTE_NOT_FOUND,
        id="invented",
    ),
    pytest.param("the", Flag.QUOTE_MISSES_CLAIM, id="the"),
]


def signed_in(role: str) -> Client:
    """A client signed in as the user of `role` (made the first time)."""
    client = Client()
    user = User.objects.filter(username=role).first()
    if user is None:
        login(client, role)
    else:
        client.force_login(user)
    return client


@pytest.mark.parametrize(("quote", "flag"), TURNED_DOWN)
def test_a_verdict_sends_a_quote_the_gate_turned_down_to_editors_and_operators_only(
    claude: FakeMessagesAPI, quote: str, flag: Flag
) -> None:
    claude.enqueue(verified_by_claude(quote), verified_by_claude(quote))  # juror, then tie-breaker
    verification = verify_station_answer()
    path = f"/api/answers/{verification.answer.public_id}/verdict"

    def claim_as(role: str) -> dict[str, Any]:
        [claim] = signed_in(role).get(path).json()["claims"]
        return claim

    reader = claim_as("reader")
    claude_votes = [v for v in reader["votes"] if v["judge"] != "local"]
    assert claude_votes and all(v["status"] == "unverified" and flag in v["flags"] for v in claude_votes)
    assert all(v["quote"] == "" for v in claude_votes)  # not even "the": it did not pass
    [local] = [v for v in reader["votes"] if v["judge"] == "local"]
    assert local["quote"] == STATION_QUOTE  # a quote that passed the gate is still shown
    assert reader["status"] == "unverified" and reader["quote"] == ""
    for role in ("editor", "operator"):
        seen = [v["quote"] for v in claim_as(role)["votes"] if v["judge"] != "local"]
        assert seen == [quote] * len(claude_votes), role
    # The reader's page shows the claim's quote, which is the gated one: none.
    page = signed_in("reader").get(verification.answer.get_absolute_url()).content.decode()
    assert f"“{quote}”" not in page and f"“{STATION_QUOTE}”" not in page


@pytest.mark.parametrize(("quote", "flag"), TURNED_DOWN)
def test_a_checked_text_sends_a_quote_the_gate_turned_down_to_editors_only(
    claude: FakeMessagesAPI, quote: str, flag: Flag
) -> None:
    def checked_as(role: str) -> dict[str, Any]:
        claude.enqueue(verified_by_claude(quote), verified_by_claude(quote))
        response = signed_in(role).post(
            "/api/check", {"text": STATION_ANSWER}, content_type="application/json"
        )
        assert response.status_code == 200
        [claim] = response.json()["claims"]
        return claim

    reader, editor = checked_as("reader"), checked_as("editor")
    assert reader["status"] == editor["status"] == "unverified"
    assert flag in reader["flags"] and reader["quote"] == ""
    assert editor["quote"] == quote
