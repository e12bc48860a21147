"""Editors review flagged claims; operators read the logs with alerts and spending; critics block unsafe answers."""

import logging

import pytest
from django.utils.html import escape

from claimcheck.terms import ClaimStatus
from garden.models import Passage
from tests.factories import answer_for, login
from verifier.models import Claim, Review
from verifier.queueing import verification_create
from verifier.review import WRONG_NEEDS_STATUS, agreement_rates
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db


def answer_from(text, passage):
    answer = answer_for(text, passage)
    verification = verification_create(answer=answer)
    assert verification is not None
    verification_run(verification_id=verification.pk)
    return answer


@pytest.fixture
def viaduct():
    return (
        Passage.objects.filter(article__slug="harrowden-viaduct", is_current=True).order_by("ordinal").first()
    )


@pytest.fixture
def flagged(viaduct):
    answer = answer_from(
        "Harrowden Viaduct carries the railway across the River Kest [1]. "
        "The viaduct was painted gold by the Emperor of Mars in 1066 [1].",
        viaduct,
    )
    return Claim.objects.get(verification__answer=answer, status__in=["unverified", "contradicted"])


def test_the_queue_lists_flagged_claims_with_quote_source_and_admin_link(client, flagged):
    login(client, "editor")
    html = client.get("/review/").content.decode()
    assert "Emperor of Mars" in html and f'id="review-claim-{flagged.pk}"' in html
    assert (
        "Harrowden Viaduct carries the railway" not in html.split("Review queue")[1].split("review-claim")[0]
    )
    assert f"/admin/garden/article/{flagged.passage.article_id}/change/" in html or flagged.passage is None
    assert client.get("/review/?status=outdated").content.decode().count("review-claim-") == 0


def test_judge_right_with_htmx_swaps_the_card_and_counts_agreement(client, flagged):
    login(client, "editor")
    response = client.post(
        f"/review/claims/{flagged.pk}/decide/", {"decision": "judge_right"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200 and "Decision recorded." in response.content.decode()
    assert "<html" not in response.content.decode()
    review = Review.objects.get(claim=flagged)
    assert review.decision == "judge_right" and review.judged_status == flagged.status
    assert agreement_rates()["all"]["rate"] == 1.0
    assert f"review-claim-{flagged.pk}" not in client.get("/review/").content.decode()


def test_judge_wrong_needs_the_correct_status_and_works_without_javascript(client, flagged):
    login(client, "editor")
    refused = client.post(
        f"/review/claims/{flagged.pk}/decide/", {"decision": "judge_wrong"}, headers={"HX-Request": "true"}
    )
    assert refused.status_code == 422 and WRONG_NEEDS_STATUS in refused.content.decode()
    done = client.post(
        f"/review/claims/{flagged.pk}/decide/",
        {"decision": "judge_wrong", "correct_status": ClaimStatus.VERIFIED, "next": "/review/"},
    )
    assert done.status_code == 302 and done["Location"] == "/review/"
    rates = agreement_rates()
    assert rates["all"]["rate"] == 0.0 and rates[flagged.status]["wrong"] == 1
    client.post(f"/review/claims/{flagged.pk}/decide/", {"decision": "note", "note": "Source needs a date."})
    assert Review.objects.filter(claim=flagged, decision="note", note="Source needs a date.").exists()


def test_a_note_over_the_limit_is_refused_with_its_length_and_nothing_is_recorded(client, flagged, settings):
    settings.REVIEW_NOTE_MAX_CHARS = 40
    login(client, "editor")
    page = client.get("/review/").content.decode()
    assert f'id="note-{flagged.pk}" name="note" maxlength="40"' in page
    refused = client.post(
        f"/review/claims/{flagged.pk}/decide/",
        {"decision": "note", "note": "x" * 41},
        headers={"HX-Request": "true"},
    )
    assert refused.status_code == 422
    assert "A note is at most 40 characters; this one has 41." in refused.content.decode()
    assert 'maxlength="40"' in refused.content.decode()
    assert not Review.objects.filter(claim=flagged).exists()
    client.post(f"/review/claims/{flagged.pk}/decide/", {"decision": "note", "note": "x" * 40})
    assert Review.objects.get(claim=flagged).note == "x" * 40


def test_an_unsafe_answer_is_blocked_collapsed_for_readers_and_raised_to_operators(client, viaduct, caplog):
    with caplog.at_level(logging.WARNING, logger="verifier.verifying"):
        answer = answer_from(
            "To reset the signalling records, run `rm -rf /var/lib/postgresql` and "
            "DROP TABLE garden_article [1].",
            viaduct,
        )
    verification = answer.verification
    verification.refresh_from_db()
    assert verification.blocked
    assert verification.findings.get(critic_name="safety").passed is False
    assert "OPERATOR ALERT" in caplog.text and "safety" in caplog.text
    page = client.get(answer.get_absolute_url()).content.decode()
    assert "Held back by the safety check." in page and '<details class="blocked">' in page
    assert client.get(f"/api/answers/{answer.public_id}").json()["verification"]["blocked"] is True

    login(client, "operator")
    logs = client.get("/operators/logs/").content.decode()
    assert "Blocked by a critic" in logs and "safety (block)" in logs
    blocked_only = client.get("/operators/logs/?severity=block").content.decode()
    assert blocked_only.count('data-label="Question"') == 1


def test_logs_show_each_answer_with_its_figures_and_todays_spend(client, flagged):
    login(client, "operator")
    html = client.get("/operators/logs/").content.decode()
    assert "Claude spend today:" in html and "daily budget" in html
    assert flagged.verification.answer.question.text in html
    assert "hallucinating" in html.lower() or "mixed" in html.lower()
    assert (
        client.get("/operators/logs/?verdict=grounded").content.decode().count('data-label="Question"') == 0
    )


def test_operators_set_the_length_limits_of_the_constraints_check(client, viaduct, settings):
    settings.CRITIC_MIN_CHARS, settings.CRITIC_MAX_CHARS = 500, 3000
    answer = answer_from("Harrowden Viaduct carries the railway across the River Kest [1].", viaduct)
    finding = answer.verification.findings.get(critic_name="constraints")
    assert not finding.passed and finding.details["failed"][0]["rule"] == "min_chars"
    page = client.get(answer.get_absolute_url()).content.decode()
    assert "constraints failed (warning)" in page and escape(finding.message) in page
