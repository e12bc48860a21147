"""The verdict as readers and API clients see it, once the judge has run."""

import pytest

from dashboard.asking import ask
from tests.factories import STATION_QUOTE, verified_by_claude, verify_station_answer
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

QUESTION = "How long is the Harrowden Viaduct and how many arches does it have?"


@pytest.fixture
def checked_answer():
    answer = ask(QUESTION)
    verification_run(verification_id=answer.verification.pk)
    answer.verification.refresh_from_db()
    return answer


def test_the_answer_page_shows_claims_with_colour_and_a_text_label(client, checked_answer):
    html = client.get(checked_answer.get_absolute_url()).content.decode()
    verification = checked_answer.verification
    claim = verification.claims.filter(is_claim=True).first()
    assert f'class="claim status-{claim.status}"' in html
    assert f"[{claim.get_status_display()}]</a>" in html
    assert "<details>" in html and "Why: every juror" in html
    assert verification.compact in html
    assert "Only the weaker local judge ran" in html
    assert "Sources used" in html
    assert 'hx-trigger="every 2s"' not in html


def test_the_verdict_api_lists_claims_votes_and_scores(client, checked_answer):
    body = client.get(f"/api/answers/{checked_answer.pk}/verdict").json()
    assert body["status"] == "done" and body["risk_label"] == "?"
    assert body["compact"].startswith("[Hall: ? · 50/100 · 1 judge")
    first = body["claims"][0]
    assert first["status"] in {
        "verified",
        "inferred",
        "unverified",
        "outdated",
        "misattributed",
        "contradicted",
    }
    assert first["votes"][0]["judge"] == "local"
    assert sum(body["counts"].values()) == len(body["claims"])


def test_the_verdict_api_before_the_judge_ran(client):
    answer = ask(QUESTION)
    body = client.get(f"/api/answers/{answer.pk}/verdict").json()
    assert body["status"] == "pending" and body["claims"] == []
    assert client.get("/api/answers/987654/verdict").status_code == 404


def test_check_any_text_against_the_garden(client):
    response = client.post(
        "/api/check",
        {
            "text": "Harrowden Viaduct carries the railway across the River Kest. It was built of gold in 1066."
        },
        content_type="application/json",
    )
    body = response.json()
    assert response.status_code == 200
    assert body["claims"][0]["status"] == "verified" and body["claims"][0]["quote"]
    assert body["claims"][1]["status"] in {"unverified", "contradicted"}
    assert body["sources"] and body["sources"][0]["url"].startswith("/articles/")
    empty = client.post("/api/check", {"text": " "}, content_type="application/json")
    assert empty.status_code == 400 and empty.json()["error"]


def test_the_judges_tokens_and_cost_are_shown_under_why(client, claude):
    claude.set_default(verified_by_claude(STATION_QUOTE))
    verification = verify_station_answer()
    assert verification.input_tokens >= 900 and verification.cost_usd > 0

    html = client.get(verification.answer.get_absolute_url()).content.decode()
    assert (
        f"judge {verification.input_tokens}+{verification.output_tokens} tokens, ${verification.cost_usd}"
        in html
    )
    verdict = client.get(f"/api/answers/{verification.answer_id}/verdict").json()
    assert (verdict["input_tokens"], verdict["output_tokens"]) == (
        verification.input_tokens,
        verification.output_tokens,
    )
    assert verdict["cost_usd"] == str(verification.cost_usd)
