"""Private stays private: a note that was published and is then made private, in any of the ways people do
it, shows none of its text to readers on any path (its page and old revisions, embeds, links, "Linked from",
topics, retrieval, answers, the API, the review queue, Verify-all reports and exports), and comes back when it
is public again."""

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from claimcheck.terms import ClaimStatus, JudgeMode
from dashboard.actions.asking import ask
from evaluation.models import GoldenQuestion, RunStatus, VerifyRun, VerifyRunItem
from garden.answering.retrieval import retrieve
from garden.models import Answer, Article, Conversation, Sync
from garden.selectors import ANSWER_NOT_SHARED
from garden.services import revision_create
from garden.sync import garden_import
from tests.factories import answer_for, garden_write, login
from verifier.models import Claim, Verification, VerificationStatus

pytestmark = pytest.mark.django_db

SECRET = "Quillmartin"  # a word only the private note holds
SECRET_TITLE = "Salary bands Ravelwick"
PRIVATE_NOTE = (
    f"---\ntitle: {SECRET_TITLE}\ntags: [payroll-zephyr]\n---\n"
    f"The pay review of 2025 gives every engineer on band {SECRET} a raise of eleven percent. "
    "The review committee meets in the glasshouse every March to set the bands.\n\n"
    "See the [[Handbook]] for how reviews are announced."
)
HANDBOOK = (
    "# Handbook\n\nThe handbook says how the cooperative announces its decisions to members.\n\n"
    "![[Pay review]]\n\nThe figures are in [[Pay review]]."
)
PAGE = "/articles/pay-review/"


def make_private_by_flag(garden: Path) -> None:
    garden_write(garden, {"Pay review.md": PRIVATE_NOTE.replace("---\ntitle:", "---\nprivate: true\ntitle:")})


def make_private_by_gardenignore(garden: Path) -> None:
    garden_write(garden, {".gardenignore": "Pay review.md\n"})


def make_private_by_dot_folder(garden: Path) -> None:
    (garden / ".private").mkdir()
    (garden / "Pay review.md").rename(garden / ".private" / "Pay review.md")


def make_private_by_logseq_property(garden: Path) -> None:
    body = PRIVATE_NOTE.split("---\n", 2)[2]
    garden_write(garden, {"Pay review.md": f"public:: false\ntitle:: {SECRET_TITLE}\n\n{body}"})


def make_private_by_broken_front_matter(garden: Path) -> None:
    broken = PRIVATE_NOTE.replace(f"title: {SECRET_TITLE}", "title: Pay review: 2025\nprivate: true")
    garden_write(garden, {"Pay review.md": broken})


def make_private_by_org_filetags(garden: Path) -> None:
    """The note rewritten in Org-mode (one place, `Pay review`), tagged private for the whole file."""
    body = PRIVATE_NOTE.split("---\n", 2)[2]
    (garden / "Pay review.md").unlink()
    garden_write(garden, {"Pay review.org": f"#+TITLE: {SECRET_TITLE}\n#+FILETAGS: :private:\n\n{body}"})


def make_private_by_org_property(garden: Path) -> None:
    body = PRIVATE_NOTE.split("---\n", 2)[2]
    (garden / "Pay review.md").unlink()
    org = f":PROPERTIES:\n:ID: 4c2e\n:PUBLISH: nil\n:END:\n#+TITLE: {SECRET_TITLE}\n\n{body}"
    garden_write(garden, {"Pay review.org": org})


def make_unreadable(garden: Path) -> None:
    garden_write(garden, {"Pay review.md": PRIVATE_NOTE.encode() + b"\xff\xfe not UTF-8"})


WAYS: dict[str, Callable[[Path], None]] = {
    "flag": make_private_by_flag,
    "gardenignore": make_private_by_gardenignore,
    "dot-folder": make_private_by_dot_folder,
    "logseq-public-false": make_private_by_logseq_property,
    "broken-front-matter": make_private_by_broken_front_matter,
    "org-filetags-private": make_private_by_org_filetags,
    "org-publish-nil": make_private_by_org_property,
    "unreadable": make_unreadable,
}


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    folder = garden_write(tmp_path / "garden", {"Pay review.md": PRIVATE_NOTE, "Handbook.md": HANDBOOK})
    garden_import([folder])
    return folder


def published(garden: Path) -> dict[str, object]:
    """While the note is public: an answer citing it, a flagged claim quoting it and a Verify-all run
    listing that claim, as readers, editors and operators would come across them."""
    article = Article.objects.get(slug="pay-review")
    passage = article.passages.get(is_current=True, text__contains=SECRET)
    answer = answer_for(f"Band {SECRET} gets a raise of eleven percent [1].", passage)
    answer.question.conversation = Conversation.objects.create()  # shown on its conversation's page too
    answer.question.save(update_fields=["conversation"])
    verification = Verification.objects.create(
        answer=answer, status=VerificationStatus.DONE, mode=JudgeMode.LOCAL, judges=1
    )
    text = answer.text
    Claim.objects.create(
        verification=verification,
        ordinal=1,
        text=text,
        start=0,
        end=len(text),
        status=ClaimStatus.UNVERIFIED,
        quote=passage.text[:60],
        source_number=1,
        passage=passage,
        confidence=0.4,
    )
    golden = GoldenQuestion.objects.create(code="pay-1", category="factual", question="What is the raise?")
    run = VerifyRun.objects.create(
        label="before",
        status=RunStatus.DONE,
        mode=JudgeMode.LOCAL,
        total=1,
        report={
            "questions": 1,
            "claims": 1,
            "unverified_claims": [{"code": "pay-1", "answer_id": answer.pk, "answer": text, "claim": text}],
        },
    )
    VerifyRunItem.objects.create(run=run, golden=golden, answer=answer, status="done")
    old_revision = article.revisions.get(superseded=False)
    return {"answer": answer, "run": run, "revision": old_revision.pk}


def client_as(role: str) -> Client:
    """A browser signed in as `role` (the user is made the first time)."""
    client = Client()
    user = User.objects.filter(username=role).first() or login(client, role)
    client.force_login(user)
    return client


def reader_sees(client: Client, path: str) -> tuple[int, str]:
    response = client.get(path)
    return response.status_code, response.content.decode()


def assert_nothing_shown(garden: Path, state: dict[str, object]) -> None:
    answer = state["answer"]
    run = state["run"]
    assert isinstance(answer, Answer) and isinstance(run, VerifyRun)
    reader, editor, operator = client_as("reader"), client_as("editor"), client_as("operator")

    assert reader_sees(reader, PAGE)[0] == 404
    assert reader_sees(reader, f"{PAGE}?revision={state['revision']}")[0] == 404
    assert reader_sees(reader, "/topics/payroll-zephyr/")[0] == 404
    for path in ["/articles/", "/articles/handbook/", "/"]:
        status, page = reader_sees(reader, path)
        assert status == 200
        assert SECRET not in page and SECRET_TITLE not in page and "payroll-zephyr" not in page, path
        assert PAGE not in page, f"{path} still links to the private note"

    # A link written after the note turned private is a red link too.
    garden_write(garden, {"Later.md": "Later notes mention [[Pay review]] and the glasshouse."})
    garden_import([garden])
    assert PAGE not in reader_sees(reader, "/articles/later/")[1]

    assert reader_sees(reader, answer.get_absolute_url())[0] == 404
    assert reader_sees(reader, f"{answer.get_absolute_url()}verdict/")[0] == 404
    conversation = answer.question.conversation
    assert conversation is not None
    status, page = reader_sees(reader, conversation.get_absolute_url())  # the turn withheld, not its text
    assert status == 200 and SECRET not in page and ANSWER_NOT_SHARED in page  # as a note not theirs
    for path in [f"/api/answers/{answer.public_id}", f"/api/answers/{answer.public_id}/verdict"]:
        status, body = reader_sees(reader, path)
        assert status == 404 and SECRET not in body

    found = retrieve(f"What raise does band {SECRET} get in the pay review of 2025?")
    private_ids = set(Article.objects.filter(slug="pay-review").values_list("pk", flat=True))
    assert not private_ids & {hit.article_id for hit in found.sources}
    assert not private_ids & {hit.article_id for hit in found.articles}
    fresh = ask(f"What raise does band {SECRET} get in the pay review?", None)
    assert SECRET not in fresh.text.replace(f"band {SECRET} get", "")  # the question's own words aside
    assert not fresh.sources.filter(passage__article__slug="pay-review").exists()

    status, body = reader_sees(editor, "/review/?reviewed=1")
    assert status == 200 and SECRET not in body
    status, body = reader_sees(operator, f"/operators/runs/{run.pk}/")
    assert status == 200 and SECRET not in body
    for fmt in ["csv", "json"]:
        status, body = reader_sees(operator, f"/operators/runs/{run.pk}/export.{fmt}")
        assert status == 200 and SECRET not in body


def assert_shown_again(state: dict[str, object]) -> None:
    answer = state["answer"]
    assert isinstance(answer, Answer)
    reader = client_as("reader")
    status, page = reader_sees(reader, PAGE)
    assert status == 200 and SECRET in page
    assert SECRET in reader_sees(reader, "/articles/handbook/")[1]  # the embed shows it again
    assert reader_sees(reader, answer.get_absolute_url())[0] == 200
    found = retrieve(f"What raise does band {SECRET} get in the pay review of 2025?")
    assert Article.objects.get(slug="pay-review").pk in {hit.article_id for hit in found.sources}


def test_a_public_note_is_shown_everywhere(garden):
    """The baseline the other tests take away: while public, the note is on every path."""
    state = published(garden)
    reader = client_as("reader")
    assert SECRET in reader_sees(reader, "/articles/handbook/")[1]  # embedded
    assert SECRET_TITLE in reader_sees(reader, "/articles/")[1]
    assert reader_sees(reader, "/topics/payroll-zephyr/")[0] == 200
    answer = state["answer"]
    assert isinstance(answer, Answer)
    assert SECRET in reader_sees(reader, answer.get_absolute_url())[1]


@pytest.mark.parametrize("way", list(WAYS))
def test_a_note_made_private_shows_nothing_anywhere_until_public_again(garden, way):
    state = published(garden)
    original = (garden / "Pay review.md").read_bytes()

    WAYS[way](garden)
    report = garden_import([garden])

    article = Article.objects.get(slug="pay-review")
    assert article.withheld, f"{way}: the article is still shown ({report})"
    assert report.retired == 0
    assert_nothing_shown(garden, state)

    (garden / ".gardenignore").unlink(missing_ok=True)
    shutil.rmtree(garden / ".private", ignore_errors=True)
    (garden / "Pay review.org").unlink(missing_ok=True)
    (garden / "Pay review.md").write_bytes(original)
    garden_import([garden])
    assert not Article.objects.get(slug="pay-review").withheld
    assert_shown_again(state)


def test_a_note_that_cannot_be_read_is_shown_to_operators_with_its_path_and_reason(garden):
    make_unreadable(garden)
    garden_import([garden])

    sync = Sync.objects.latest()
    assert [path for path, _ in sync.failures] == [str(garden / "Pay review.md")]
    operator = client_as("operator")
    logs = operator.get("/operators/logs/").content.decode()
    assert "Pay review.md" in logs and "not valid UTF-8" in logs
    health = json.loads(operator.get("/api/health").content)
    assert any("Pay review.md" in failure["path"] for failure in health["garden"]["failures"])


def test_an_admin_edit_does_not_take_a_note_out_of_its_garden(garden):
    article = Article.objects.get(slug="pay-review")
    current = article.revisions.get(superseded=False)
    revision_create(
        article=article,
        title=current.title,
        body=current.body + "\n\nEdited in the admin.",
        source_path="admin",
    )
    make_private_by_flag(garden)
    garden_import([garden])
    assert Article.objects.get(slug="pay-review").withheld


def test_a_moved_garden_does_not_leave_its_old_notes_live(garden, tmp_path):
    moved = tmp_path / "moved"
    shutil.copytree(garden, moved)
    (moved / "Pay review.md").unlink()  # deleted while the garden moved
    shutil.rmtree(garden)
    os.makedirs(garden)  # the old mount point, now empty

    garden_import([moved])

    article = Article.objects.get(slug="pay-review")
    assert article.retired_at is not None
    assert Article.objects.get(slug="handbook").garden == str(moved.resolve())
