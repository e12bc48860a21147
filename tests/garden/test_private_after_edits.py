"""Private stays private as gardens are really edited: in the admin (issue 31, point 3). The garden, its private
note and the walk over every reader's path are those of `test_private_stays_private`."""

from pathlib import Path

import pytest

from garden.models import Article, ArticleRevision
from garden.retrieval import retrieve
from garden.sync import garden_import
from tests.factories import garden_write
from tests.garden.test_private_stays_private import (
    HANDBOOK,
    PRIVATE_NOTE,
    SECRET,
    SECRET_TITLE,
    assert_nothing_shown,
    client_as,
    make_private_by_flag,
    published,
    reader_sees,
)

pytestmark = pytest.mark.django_db

EDITED = "Brackenvole"  # a word only the admin's edit of the private note holds
EDITED_LINE = f"From April the band {EDITED} is merged into band {SECRET}."
SYNC_OWNED = ["slug", "garden", "retired_at", "withheld_at", "withheld_reason"]


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    """The garden of `test_private_stays_private`: the private-to-be note and a handbook embedding it."""
    folder = garden_write(tmp_path / "garden", {"Pay review.md": PRIVATE_NOTE, "Handbook.md": HANDBOOK})
    garden_import([folder])
    return folder


def withheld_in_admin(garden: Path) -> ArticleRevision:
    make_private_by_flag(garden)
    garden_import([garden])
    article = Article.objects.get(slug="pay-review")
    assert article.withheld
    return article.revisions.get(superseded=False)


def test_the_admin_shows_what_the_sync_decides_and_lets_nobody_change_it(garden, admin_client):
    article = Article.objects.get(slug="pay-review")
    page = admin_client.get(f"/admin/garden/article/{article.pk}/change/").content.decode()

    assert 'name="title"' in page  # the form is there, and what a person may edit is editable
    for field in SYNC_OWNED:
        assert f'name="{field}"' not in page, f"{field} is editable in the admin"
    assert str(garden.resolve()) in page  # shown, read-only

    admin_client.post(
        f"/admin/garden/article/{article.pk}/change/",
        {
            "title": article.title,
            "path": article.path,
            "slug": "somewhere-else",
            "withheld_at_0": "2020-01-01",
            "withheld_at_1": "00:00:00",
            "garden": "/elsewhere",
            "revisions-TOTAL_FORMS": "0",
            "revisions-INITIAL_FORMS": "0",
        },
    )
    article.refresh_from_db()
    assert (article.slug, article.withheld_at, article.garden) == ("pay-review", None, str(garden.resolve()))


def test_an_admin_edit_of_a_withheld_note_is_retrieved_checked_and_shown_nowhere(garden, admin_client):
    state = published(garden)
    current = withheld_in_admin(garden)

    form = f"/admin/garden/articlerevision/{current.pk}/change/"
    assert SECRET in admin_client.get(form).content.decode()  # a superuser, as operators, may see why
    response = admin_client.post(form, {"title": current.title, "body": f"{current.body}\n\n{EDITED_LINE}"})
    assert response.status_code == 302
    edit = Article.objects.get(slug="pay-review").revisions.get(superseded=False)
    assert EDITED in edit.body and edit.source_path == "admin"  # the edit was made, and is its current text
    assert Article.objects.get(slug="pay-review").withheld

    question = f"Which band is {EDITED} merged into from April?"
    found = retrieve(question)
    assert edit.article_id not in {hit.article_id for hit in found.sources}
    assert edit.article_id not in {hit.article_id for hit in found.articles}
    checked = admin_client.post("/api/check", {"text": EDITED_LINE}, "application/json")
    assert checked.status_code == 200
    body = checked.json()
    assert "pay-review" not in {source["article"] for source in body["sources"]}
    assert not any(EDITED in (claim.get("quote") or "") for claim in body["claims"])
    reader = client_as("reader")
    assert reader_sees(reader, "/topics/payroll-zephyr/")[0] == 404
    assert_nothing_shown(garden, state)  # pages, embeds, links, answers, verdicts, retrieval, review, runs


def test_the_admin_lists_a_withheld_note_to_operators_only(garden):
    current = withheld_in_admin(garden)
    editor, operator = client_as("editor"), client_as("operator")

    for client, shown in [(editor, False), (operator, True)]:
        listed = client.get(f"/admin/garden/articlerevision/?q={SECRET}").content.decode()
        assert (f"/admin/garden/articlerevision/{current.pk}/change/" in listed) is shown
        articles = client.get("/admin/garden/article/").content.decode()
        assert (SECRET_TITLE in articles) is shown
        form = client.get(f"/admin/garden/articlerevision/{current.pk}/change/", follow=True)
        assert (SECRET in form.content.decode()) is shown
