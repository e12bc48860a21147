"""One shape of an answer and its verdict: the API, its schema, `ask --json` and the answer page all render it."""

import json

import pytest
from django.core.management import call_command

from tests.factories import verification_with_claims

pytestmark = pytest.mark.django_db

IN_SCOPE = "When did Ashcombe station reopen?"
OUT_OF_SCOPE = "How do I bake sourdough bread at home?"

ANSWER_FIELDS = {
    "question_id",
    "answer_id",
    "question",
    "conversation",
    "turn",
    "searched_for",
    "refused",
    "refusal_reason",
    "abstained",
    "answers_question",
    "answers_question_label",
    "answer",
    "error",
    "generator",
    "budget_held",
    "model_failed",
    "model",
    "sources",
    "citations",
    "topics",
    "themes",
    "preflight",
    "usage",
    "verification",
}
VERDICT_FIELDS = {
    "status",
    "error",
    "verdict",
    "risk_score",
    "risk_label",
    "delta_score",
    "confidence",
    "compact",
    "answers_question",
    "answers_question_label",
    "judges",
    "flags",
    "local_only",
    "disclosure",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "counts",
    "sources_used",
    "blocked",
    "critics",
    "claims",
}
CLAIM_FIELDS = {
    "text",
    "start",
    "end",
    "status",
    "quote",
    "source_index",
    "article",
    "confidence",
    "flags",
    "escalated",
    "votes",
    "id",
}


def test_ask_json_prints_what_the_api_returns_for_the_same_answer(client, capsys):
    call_command("ask", IN_SCOPE, "--json")
    printed = json.loads(capsys.readouterr().out)
    # The command's conversation is no visitor's: its id (which would show every turn) is for its owner only.
    assert printed["conversation"] is not None
    assert client.get(f"/api/answers/{printed['answer_id']}").json() == {**printed, "conversation": None}
    assert set(printed) == ANSWER_FIELDS and set(printed["sources"][0]) == {"article", "title", "score"}


@pytest.mark.parametrize("question", [IN_SCOPE, OUT_OF_SCOPE])
def test_ask_json_wait_prints_the_verdict_the_api_gives(client, capsys, question):
    call_command("ask", question, "--json", "--wait", "--timeout", "0")
    printed = json.loads(capsys.readouterr().out)
    verdict = client.get(f"/api/answers/{printed['answer_id']}/verdict").json()
    assert printed["verification"] == verdict and set(verdict) == VERDICT_FIELDS
    assert verdict["status"] == ("pending" if question == IN_SCOPE else None)


def test_the_api_sends_what_its_schema_documents_and_nothing_only_pages_show(client):
    verification = verification_with_claims(2)
    public_id = verification.answer.public_id
    answer = client.get(f"/api/answers/{public_id}").json()
    verdict = client.get(f"/api/answers/{public_id}/verdict").json()
    schemas = client.get("/api/openapi.json").json()["components"]["schemas"]

    assert set(answer) == set(schemas["AnswerOut"]["properties"]) == ANSWER_FIELDS
    assert set(verdict) == set(schemas["VerdictOut"]["properties"]) == VERDICT_FIELDS
    assert set(verdict["claims"][0]) == set(schemas["ClaimOut"]["properties"]) == CLAIM_FIELDS
    assert set(answer["citations"][0]) == set(schemas["CitationOut"]["properties"])
    assert not {"PassageOut", "TopicOut"} & set(schemas)


def test_the_answer_page_shows_the_verdict_the_api_gives(client):
    verification = verification_with_claims(3)
    answer = verification.answer
    verdict = client.get(f"/api/answers/{answer.public_id}/verdict").json()
    html = client.get(answer.get_absolute_url()).content.decode()
    assert verdict["compact"] in html
    for claim, row in zip(verdict["claims"], verification.claims.order_by("ordinal"), strict=True):
        assert f'<li id="claim-{row.pk}">' in html and claim["text"] in html
        assert [vote["judge"] for vote in claim["votes"]] == ["local", "claude-test"]
    for status, count in verdict["counts"].items():
        assert f'<li class="status status-{status}">' in html
        assert f'<span class="label">{status.capitalize()}</span> {count}' in html
