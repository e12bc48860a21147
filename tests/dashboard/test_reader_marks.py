"""Readers mark an answer helpful or not and report a claim wrong: one mark each, theirs alone, rate-limited; a
reported claim reaches the review queue, and an editor's decision on it is training data like any other."""

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from claimcheck.terms import ClaimStatus
from dashboard.actions.answers import MARK_NEEDS_READER
from dashboard.api import BODY_NOT_JSON
from dashboard.ratelimit import MARK_RATE_LIMITED, REPORTS_DAY_SPENT
from evaluation.retraining import editor_reviews
from garden.models import Conversation, Passage
from tests.factories import answer_for, login, page_text, verification_with_claims
from verifier.marks import MARKED_HELPFUL, MARKED_UNHELPFUL, MARKED_WRONG
from verifier.models import AnswerMark, Claim, ClaimReport
from verifier.queueing import verification_create
from verifier.review import NOTE_TOO_LONG
from verifier.tokens import token_create
from verifier.verifying import verification_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_counts")]

HTMX = {"HX-Request": "true"}
RIGHT = "Harrowden Viaduct carries the railway across the River Kest [1]."
INVENTED = "The viaduct was painted gold by the Emperor of Mars in 1066 [1]."


@pytest.fixture
def answer():
    """A checked answer, a turn of a conversation: one claim the judge verified, one it flagged."""
    passage = Passage.objects.filter(article__slug="harrowden-viaduct", is_current=True).order_by("ordinal")[
        0
    ]
    answer = answer_for(f"{RIGHT} {INVENTED}", passage)
    answer.question.conversation = Conversation.objects.create()
    answer.question.save()
    verification = verification_create(answer=answer)
    assert verification is not None
    verification_run(verification_id=verification.pk)
    return answer


@pytest.fixture
def verified(answer):
    return Claim.objects.get(verification__answer=answer, status=ClaimStatus.VERIFIED)


@pytest.fixture
def flagged(answer):
    return Claim.objects.get(verification__answer=answer, status__in=["unverified", "contradicted"])


def reader(name="reader"):
    user = User.objects.create_user(name, password="x")
    user.groups.add(Group.objects.get(name="reader"))
    return user


def mark(client, answer, helpful, **extra):
    return client.post(f"/answers/{answer.public_id}/mark/", {"helpful": helpful}, **extra)


def report(client, claim, note="", **extra):
    answer = claim.verification.answer
    return client.post(f"/answers/{answer.public_id}/claims/{claim.pk}/report/", {"note": note}, **extra)


def test_a_reader_marks_an_answer_and_a_second_mark_replaces_the_first(client, answer):
    client.force_login(reader())
    page = client.get(answer.get_absolute_url()).content.decode()
    assert "Helpful?" in page and 'aria-pressed="false">Yes' in page and MARKED_HELPFUL not in page
    first = mark(client, answer, "yes", headers=HTMX)
    assert first.status_code == 200 and "<html" not in first.content.decode()
    assert MARKED_HELPFUL in first.content.decode() and 'aria-pressed="true">Yes' in first.content.decode()
    again = mark(client, answer, "no")  # without JavaScript: back to the answer
    assert again.status_code == 302 and again["Location"] == answer.get_absolute_url()
    assert AnswerMark.objects.get(answer=answer).helpful is False
    page = client.get(answer.get_absolute_url()).content.decode()
    assert MARKED_UNHELPFUL in page and 'aria-pressed="true">No' in page


def test_a_reader_reports_a_claim_wrong_with_a_note_once(client, answer, verified):
    client.force_login(reader())
    done = report(client, verified, "The river is the Wendle, not the Kest.", headers=HTMX)
    assert done.status_code == 200
    assert f"{MARKED_WRONG}: “The river is the Wendle, not the Kest.”" in page_text(done.content.decode())
    report(client, verified, "It crosses the Wendle.", headers=HTMX)
    assert ClaimReport.objects.get(claim=verified).note == "It crosses the Wendle."
    page = client.get(answer.get_absolute_url()).content.decode()
    assert f"{MARKED_WRONG}: “It crosses the Wendle.”" in page_text(page)


def test_a_visitor_marks_by_their_session_and_nobody_else_sees_a_mark(client, answer, verified):
    assert mark(client, answer, "no", headers=HTMX).status_code == 200
    assert report(client, verified, "Wrong river.", headers=HTMX).status_code == 200
    assert MARKED_UNHELPFUL in client.get(answer.get_absolute_url()).content.decode()

    other_visitor = Client()
    page = other_visitor.get(answer.get_absolute_url()).content.decode()
    assert "Helpful?" in page and MARKED_UNHELPFUL not in page and MARKED_WRONG not in page
    assert "Wrong river." not in page
    signed_in = Client()
    signed_in.force_login(reader())
    page = signed_in.get(answer.get_absolute_url()).content.decode()
    assert MARKED_UNHELPFUL not in page and "Wrong river." not in page
    mark(signed_in, answer, "yes")
    assert sorted(AnswerMark.objects.filter(answer=answer).values_list("helpful", flat=True)) == [False, True]


def test_a_note_over_the_editors_limit_is_refused_and_nothing_is_recorded(client, verified, settings):
    settings.REVIEW_NOTE_MAX_CHARS = 20
    refused = report(client, verified, "x" * 21, headers=HTMX)
    assert refused.status_code == 422
    assert NOTE_TOO_LONG.format(limit=20, length=21) in refused.content.decode()
    assert 'maxlength="20"' in refused.content.decode() and "x" * 21 in refused.content.decode()
    assert not ClaimReport.objects.exists()


def test_marks_are_rate_limited_with_a_clear_message(client, answer, verified, settings):
    settings.RATE_LIMIT_PER_IP = 2
    assert mark(client, answer, "yes", headers=HTMX).status_code == 200
    assert report(client, verified, headers=HTMX).status_code == 200
    over = mark(client, answer, "no", headers=HTMX)
    assert over.status_code == 429 and MARK_RATE_LIMITED in over.content.decode()
    assert 0 < int(over["Retry-After"]) <= 60
    assert AnswerMark.objects.get(answer=answer).helpful is True  # the refused mark changed nothing
    without_js = report(client, verified, "late")
    assert without_js.status_code == 302
    assert MARK_RATE_LIMITED in client.get(without_js["Location"]).content.decode()
    assert ClaimReport.objects.get(claim=verified).note == ""


def test_one_address_makes_a_bounded_number_of_reports_a_day_however_many_sessions(
    verified, flagged, settings
):
    settings.REPORTS_PER_ADDRESS_PER_DAY = 2
    spent = REPORTS_DAY_SPENT.format(limit=2)
    # Each visitor a fresh browser session, so a new reader to the marks: the address is the same.
    for claim in (verified, flagged):
        assert report(Client(), claim, "Wrong.", headers=HTMX).status_code == 200
    over = report(Client(), flagged, "Wrong again.", headers=HTMX)
    assert over.status_code == 429 and spent in over.content.decode()
    assert 0 < int(over["Retry-After"]) <= 86_400  # the rest of the day's window
    user = reader()
    bearer = {"Authorization": f"Bearer {token_create(user_id=user.pk, name='laptop')[1]}"}
    path = f"/api/answers/{verified.verification.answer.public_id}/claims/{verified.pk}/report"
    scripted = Client().post(path, {"note": "Wrong."}, "application/json", headers=bearer)
    assert scripted.status_code == 429 and scripted.json() == {"error": spent}
    assert ClaimReport.objects.count() == 2  # nothing more reached the editors' queue
    elsewhere = Client(REMOTE_ADDR="198.51.100.7")
    assert report(elsewhere, flagged, "Wrong.", headers=HTMX).status_code == 200


def test_who_may_not_ask_may_not_mark(client, answer, settings):
    settings.ANONYMOUS_CAN_ASK = False
    assert mark(client, answer, "no").status_code == 302  # to the login page
    assert not AnswerMark.objects.exists()
    assert client.get(f"/answers/{answer.public_id}/mark/").status_code in (302, 405)


def test_a_reported_claim_the_judge_verified_joins_the_queue_with_the_readers_note(client, verified, flagged):
    report(client, verified, "The river is the Wendle.")
    login(client, "editor")
    queue = client.get("/review/").content.decode()
    assert f'id="review-claim-{verified.pk}"' in queue and f'id="review-claim-{flagged.pk}"' in queue
    assert "Reported by a reader</span>: “The river is the Wendle.”" in page_text(queue)
    reports_only = client.get("/review/?reports=1").content.decode()
    assert f'id="review-claim-{verified.pk}"' in reports_only
    assert f'id="review-claim-{flagged.pk}"' not in reports_only
    assert 'aria-current="page">Reader reports' in page_text(reports_only)


def test_an_editors_decision_on_a_reported_claim_is_what_retraining_reads(client, verified):
    report(client, verified, "Wrong river.")
    login(client, "editor")
    decided = client.post(
        f"/review/claims/{verified.pk}/decide/",
        {"decision": "judge_wrong", "correct_status": ClaimStatus.CONTRADICTED},
        headers=HTMX,
    )
    assert decided.status_code == 200 and "Decision recorded." in decided.content.decode()
    assert "Reported by a reader</span>: “Wrong river.”" in page_text(decided.content.decode())
    trained_on = {review.claim_id: review for review in editor_reviews()}
    assert verified.pk in trained_on and trained_on[verified.pk].supported is False
    assert f"review-claim-{verified.pk}" not in client.get("/review/?reports=1").content.decode()


def test_the_logs_count_the_answers_readers_marked_unhelpful(client, answer):
    other = answer_for("Harrowden Viaduct has arches.", question="What has arches?")
    mark(client, answer, "no")
    mark(Client(), answer, "yes")
    mark(Client(), other, "yes")
    login(client, "operator")
    logs = page_text(client.get("/operators/logs/").content.decode())
    assert "answers marked unhelpful: 1 of 2 (50.0%)" in logs


def test_a_claim_is_reported_only_at_its_own_answers_address(client, verified):
    elsewhere = answer_for("Harrowden Viaduct has arches.", question="What has arches?")
    forged = client.post(f"/answers/{elsewhere.public_id}/claims/{verified.pk}/report/", {"note": "spam"})
    assert forged.status_code == 404 and not ClaimReport.objects.exists()


def test_a_script_marks_and_reports_through_the_api_with_a_token(verified, answer, settings):
    user = reader()
    bearer = {"Authorization": f"Bearer {token_create(user_id=user.pk, name='laptop')[1]}"}
    script = Client()
    verdict = script.get(f"/api/answers/{answer.public_id}/verdict", headers=bearer).json()
    claim_id = next(c["id"] for c in verdict["claims"] if c["status"] == ClaimStatus.VERIFIED)
    assert claim_id == verified.pk
    marked = script.post(
        f"/api/answers/{answer.public_id}/mark", {"helpful": False}, "application/json", headers=bearer
    )
    assert marked.status_code == 200 and marked.json() == {
        "answer_id": str(answer.public_id),
        "helpful": False,
    }
    path = f"/api/answers/{answer.public_id}/claims/{claim_id}/report"
    reported = script.post(path, {"note": "Wrong river."}, "application/json", headers=bearer)
    assert reported.status_code == 200 and reported.json()["note"] == "Wrong river."
    assert ClaimReport.objects.get(claim=verified).user == user
    schemas = script.get("/api/openapi.json").json()["components"]["schemas"]
    assert schemas["ReportIn"]["properties"]["note"]["maxLength"] == settings.REVIEW_NOTE_MAX_CHARS
    settings.REVIEW_NOTE_MAX_CHARS = 5
    too_long = script.post(path, {"note": "Wrong river."}, "application/json", headers=bearer)
    assert too_long.status_code == 400
    assert too_long.json() == {"error": NOTE_TOO_LONG.format(limit=5, length=12)}
    # A visitor's script with no session has no mark to call its own.
    anonymous = Client().post(f"/api/answers/{answer.public_id}/mark", {"helpful": True}, "application/json")
    assert anonymous.status_code == 403 and anonymous.json() == {"error": MARK_NEEDS_READER}
    assert AnswerMark.objects.get().helpful is False


def test_a_mark_whose_body_is_not_json_is_refused_as_documented(answer):
    user = reader()
    bearer = {"Authorization": f"Bearer {token_create(user_id=user.pk, name='laptop')[1]}"}
    script = Client()
    refused = script.post(f"/api/answers/{answer.public_id}/mark", "\x00", "application/json", headers=bearer)
    assert refused.status_code == 400 and refused.json() == {"error": BODY_NOT_JSON}
    assert not AnswerMark.objects.exists()
    paths = script.get("/api/openapi.json").json()["paths"]
    for path in ("/api/answers/{answer_id}/mark", "/api/answers/{answer_id}/claims/{claim_id}/report"):
        assert "400" in paths[path]["post"]["responses"], path


def _reports_on(verification, readers):
    for claim in verification.claims.all():
        for n in range(readers):
            ClaimReport.objects.create(claim=claim, marker=f"session:s{n}", note=f"Note {n} on {claim.text}")


def test_the_queue_of_reported_claims_takes_the_same_queries_however_many(
    client, django_assert_max_num_queries
):
    login(client, "editor")
    _reports_on(verification_with_claims(1), readers=1)
    with CaptureQueriesContext(connection) as one:
        assert client.get("/review/?reports=1").content.decode().count("Reported by a reader") == 1
    _reports_on(verification_with_claims(6), readers=3)
    with django_assert_max_num_queries(len(one.captured_queries)):
        assert client.get("/review/?reports=1").content.decode().count("Reported by a reader") == 19
