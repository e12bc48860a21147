"""Editors' pages keep audiences as the reader pages do: the review queue shows a flagged claim's quote and passage
as its editor's reader pages would (an `hr` note's name and words for `hr` only), and the admin lists only the
topics an editor may see and never changes a note's audiences or path (the folder is the truth)."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from django.test import Client

from claimcheck.terms import ClaimStatus, JudgeMode
from garden.audiences import members_add
from garden.models import Article, Passage, Topic
from garden.selectors import NOTE_NOT_SHARED_LINK
from garden.sync import garden_import
from tests.factories import answer_for, garden_write, member
from verifier.models import Claim, Verification, VerificationStatus
from verifier.roles import EDITOR, OPERATOR

pytestmark = pytest.mark.django_db

HR_FILE = "Zorvath pay"
HR_WORDS = "reviewed in the greenhouse each March"
PUBLIC_NOTE = (
    "# Pay scales\n\nThe pay scales of the cooperative are published to every member each spring, with the "
    f"bands for every role.\n\nThe details are in [[{HR_FILE}]] and ![[{HR_FILE}]] for those who may read them."
)
HR_NOTE = f"# Zorvath pay\n\nThe pay scales for the office put every engineer on a band {HR_WORDS}."


def staff_in(name: str, role: str, audience: str | None = None) -> Client:
    """A client signed in as a new staff account of `role`, in `audience` if one is given."""
    return member(name, role, *([audience] if audience else []), staff=True)[1]


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    folder = garden_write(
        tmp_path / "garden",
        {".gardenaccess": "hr/: hr\n", "Pay scales.md": PUBLIC_NOTE, f"hr/{HR_FILE}.md": HR_NOTE},
    )
    for name in ("hr", "board"):
        members_add(name, [])
    report = garden_import([folder])
    assert not report.failures
    return folder


def hr_article() -> Article:
    article = Article.objects.get(path=f"hr/{HR_FILE}")
    assert article.audiences == ["hr"]
    return article


def test_a_notes_audiences_and_path_are_read_only_in_the_admin(garden: Path) -> None:
    operator = staff_in("olive", OPERATOR)
    article = hr_article()
    address = f"/admin/garden/article/{article.pk}/change/"
    page = operator.get(address).content.decode()
    assert 'name="audiences"' not in page and 'name="path"' not in page and 'name="garden"' not in page
    assert 'name="slug"' not in page
    assert "field-audiences" in page and "hr" in page and f"hr/{HR_FILE}" in html.unescape(page)

    revisions = article.revisions.count()
    response = operator.post(
        address,
        {
            "title": article.title,
            "aliases": "",
            "tags": "",
            "audiences": "",
            "path": "elsewhere/Zorvath pay",
            "slug": "elsewhere",
            "garden": "/tmp/elsewhere",
            "revisions-TOTAL_FORMS": "0",
            "revisions-INITIAL_FORMS": "0",
            "revisions-MIN_NUM_FORMS": "0",
            "revisions-MAX_NUM_FORMS": "1000",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    after = Article.objects.get(pk=article.pk)
    assert after.audiences == ["hr"] and after.path == f"hr/{HR_FILE}"
    assert (after.slug, after.garden) == (article.slug, article.garden)
    assert article.revisions.count() == revisions


def test_the_admins_topics_show_what_the_editor_may_see(garden: Path) -> None:
    hr_only = Topic.objects.filter(articles=hr_article()).exclude(articles__audiences=[]).get()
    shared = Topic.objects.get(articles__path="Pay scales")
    outside = staff_in("bob", EDITOR, "board")
    inside = staff_in("alice", EDITOR, "hr")
    operator = staff_in("olive", OPERATOR)

    bobs = html.unescape(outside.get("/admin/garden/topic/").content.decode())
    assert shared.title in bobs and hr_only.title not in bobs and hr_only.slug not in bobs
    assert outside.get(f"/admin/garden/topic/{hr_only.pk}/change/").status_code == 302  # as one not there
    assert outside.get(f"/admin/garden/topic/{shared.pk}/change/").status_code == 200
    for client in (inside, operator):
        listed = html.unescape(client.get("/admin/garden/topic/").content.decode())
        assert hr_only.title in listed and shared.title in listed

    # Nor is it offered on the change page of a note they may edit.
    article = f"/admin/garden/article/{Article.objects.get(path='Pay scales').pk}/change/"
    assert hr_only.title not in html.unescape(outside.get(article).content.decode())
    assert hr_only.title in html.unescape(operator.get(article).content.decode())


def flagged_quoting_the_link() -> Claim:
    """A finished check of an answer drawn from the shared note, whose one claim the judge found contradicted,
    quoting the passage's link to (and embed of) the hr note."""
    passage = Passage.objects.get(article__path="Pay scales", is_current=True, text__contains="The details")
    answer = answer_for("The pay scales are published each autumn [1].", passage)
    verification = Verification.objects.create(
        answer=answer, status=VerificationStatus.DONE, mode=JudgeMode.LOCAL, judges=1, risk_score=80
    )
    return Claim.objects.create(
        verification=verification,
        ordinal=1,
        text=answer.text,
        start=0,
        end=len(answer.text),
        status=ClaimStatus.CONTRADICTED,
        quote=passage.text[passage.text.index("The details") :],
        source_number=1,
        passage=passage,
        confidence=0.9,
    )


def test_the_review_queue_shows_quotes_and_passages_as_the_editors_reader_pages_do(garden: Path) -> None:
    claim = flagged_quoting_the_link()
    assert claim.passage is not None
    assert HR_FILE in claim.quote and HR_FILE in claim.passage.text  # stored as written
    outside = staff_in("bob", EDITOR, "board")

    queue = html.unescape(outside.get("/review/").content.decode())
    assert f"review-claim-{claim.pk}" in queue and "published each autumn" in queue
    assert HR_FILE not in queue and HR_WORDS not in queue
    assert queue.count(NOTE_NOT_SHARED_LINK) >= 2  # in the quote and in the passage
    card = outside.post(
        f"/review/claims/{claim.pk}/decide/",
        {"decision": "note", "note": "A date?"},
        headers={"HX-Request": "true"},
    )
    assert card.status_code == 200
    card_text = html.unescape(card.content.decode())
    assert NOTE_NOT_SHARED_LINK in card_text and HR_FILE not in card_text and HR_WORDS not in card_text

    for client in (staff_in("alice", EDITOR, "hr"), staff_in("olive", OPERATOR)):
        theirs = html.unescape(client.get("/review/?reviewed=1").content.decode())
        assert f"review-claim-{claim.pk}" in theirs and f"[[{HR_FILE}]]" in theirs
        assert NOTE_NOT_SHARED_LINK not in theirs


def test_the_review_queue_lists_no_claim_of_an_answer_from_a_note_not_the_editors(garden: Path) -> None:
    passage = Passage.objects.filter(article=hr_article(), is_current=True).first()
    assert passage is not None
    answer = answer_for("Every engineer is on a band reviewed each spring [1].", passage)
    verification = Verification.objects.create(
        answer=answer, status=VerificationStatus.DONE, mode=JudgeMode.LOCAL, judges=1, risk_score=80
    )
    claim = Claim.objects.create(
        verification=verification,
        ordinal=1,
        text=answer.text,
        start=0,
        end=len(answer.text),
        status=ClaimStatus.CONTRADICTED,
        quote=HR_WORDS,
        source_number=1,
        passage=passage,
        confidence=0.9,
    )
    outside = staff_in("bob", EDITOR, "board")
    queue = html.unescape(outside.get("/review/").content.decode())
    assert f"review-claim-{claim.pk}" not in queue and HR_WORDS not in queue
    refused = outside.post(f"/review/claims/{claim.pk}/decide/", {"decision": "judge_right"})
    assert refused.status_code == 404
    assert f"review-claim-{claim.pk}" in staff_in("alice", EDITOR, "hr").get("/review/").content.decode()
