"""The verdict as readers and API clients see it, once the judge has run."""

import pytest
from django.urls import reverse
from django.utils.html import escape

from dashboard.asking import ask
from garden.models import AnswerSource
from tests.factories import (
    STATION_QUOTE,
    login,
    verification_with_claims,
    verified_by_claude,
    verify_station_answer,
)
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
    body = client.get(f"/api/answers/{checked_answer.public_id}/verdict").json()
    # Only the local judge ran (no key): its verdict gives the label, and the compact line says whose it is.
    assert body["status"] == "done" and body["local_only"] and body["risk_label"] in {"✓", "~", "⚠"}
    assert body["compact"].startswith(
        f"[Hall: {body['risk_label']} · {body['risk_score']}/100 · local judge · "
    )
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
    body = client.get(f"/api/answers/{answer.public_id}/verdict").json()
    assert body["status"] == "pending" and body["claims"] == []
    assert client.get("/api/answers/987654/verdict").status_code == 404


def test_check_any_text_against_the_garden(client):
    login(client, "reader")
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
    verdict = client.get(f"/api/answers/{verification.answer.public_id}/verdict").json()
    assert (verdict["input_tokens"], verdict["output_tokens"]) == (
        verification.input_tokens,
        verification.output_tokens,
    )
    assert verdict["cost_usd"] == str(verification.cost_usd)


# Every open answer page polls its verdict every 2 s. The answer with its sources and retrieval (5), the
# verification with its findings, claims (and their passages' articles) and votes (4): none per claim.
MAX_QUERIES = 9


@pytest.mark.parametrize(
    ("url", "headers"),
    [
        ("/answers/{}/", {}),
        ("/answers/{}/verdict/", {"HX-Request": "true"}),
        ("/api/answers/{}/verdict", {}),
    ],
    ids=["answer page", "verdict partial", "verdict api"],
)
def test_the_answer_and_its_verdict_cost_the_same_few_queries_for_3_claims_or_20(
    client, django_assert_max_num_queries, url, headers
):
    queries = {}
    for count in (3, 20):
        verification = verification_with_claims(count)
        # The last claim quotes the answer's last source.
        last = (
            AnswerSource.objects.select_related("passage__article")
            .get(answer=verification.answer, number=count)
            .passage
        )
        with django_assert_max_num_queries(MAX_QUERIES) as captured:
            response = client.get(url.format(verification.answer.public_id), headers=headers)
        queries[count] = len(captured)
        assert response.status_code == 200
        if url.startswith("/api/"):
            claims = response.json()["claims"]
            assert len(claims) == count and claims[-1]["article"] == last.article.slug
            assert [vote["judge"] for vote in claims[-1]["votes"]] == ["local", "claude-test"]
        else:
            html = response.content.decode()
            passage = reverse("dashboard:article", args=[last.article.slug]) + f"#chunk-{last.pk}"
            assert html.count('<li id="claim-') == count
            assert f'Source [{count}]: <a href="{passage}">{escape(last.article.title)}</a>' in html
            assert html.count("<td>claude-test</td>") == count
    assert queries[3] == queries[20]
