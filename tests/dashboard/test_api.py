"""The JSON API and the `ask` command give the same answer shape and the same clear errors."""

import json
import re

import pytest
from django.core.management import CommandError, call_command

from garden.answering import EMPTY_QUESTION
from tests.factories import login
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
