"""Private stays private as gardens are really edited: in the admin, on topics that a private note shared with
public ones, in the review queue's topic filter and in the images a private note showed (issue 31, points 3
and 5). The garden, its private note and the walk over every reader's path are those of
`test_private_stays_private`."""

import re
from pathlib import Path

import pytest
from django.test import Client

from garden.answering.retrieval import retrieve
from garden.models import Article, ArticleRevision, Generator, Topic
from garden.sync import garden_import
from tests.factories import garden_write
from tests.garden.test_gardens import PNG
from tests.garden.test_private_stays_private import (
    HANDBOOK,
    PAGE,
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


# A private note with an alias, sharing its tag-topic with a public one (its title is the tag's).
PAY = (
    "---\naliases: [Q3 layoff list]\ntags: [pay]\n---\n# Pay\n\nThe names on the list stay with the board.\n"
)
CALENDAR = "---\ntags: [pay]\n---\n# Payroll calendar\n\nSalaries are paid on the last Friday of the month.\n"
ALIAS_QUESTION = "Who is on the Q3 layoff list?"


@pytest.fixture
def shared_topic(tmp_path: Path) -> Path:
    folder = garden_write(tmp_path / "shared", {"Pay.md": PAY, "Payroll calendar.md": CALENDAR})
    garden_import([folder])
    return folder


def test_a_private_note_s_alias_leaves_the_topic_it_shared_and_the_refusal_gate_refuses(shared_topic):
    from dashboard.actions.asking import ask

    topic = Topic.objects.get(slug="pay")
    reader = client_as("reader")
    assert "Q3 layoff list" in reader_sees(reader, "/topics/pay/")[1]  # while public, the alias names it
    assert topic.pk in retrieve(ALIAS_QUESTION).topic_ids

    garden_write(shared_topic, {"Pay.md": PAY.replace("---\naliases", "---\nprivate: true\naliases")})
    garden_import([shared_topic])

    status, page = reader_sees(reader, "/topics/pay/")
    assert status == 200 and "Payroll calendar" in page  # the public note keeps the topic
    assert "Q3 layoff list" not in page
    assert retrieve(ALIAS_QUESTION).empty
    answer = ask(ALIAS_QUESTION)
    assert answer.generator == Generator.REFUSAL and answer.input_tokens == 0

    garden_write(shared_topic, {"Pay.md": PAY})  # public again, as it was: its alias is back
    garden_import([shared_topic])
    assert "Q3 layoff list" in reader_sees(reader, "/topics/pay/")[1]


def test_an_alias_taken_out_of_a_note_leaves_its_topic(shared_topic):
    garden_write(shared_topic, {"Pay.md": PAY.replace("aliases: [Q3 layoff list]", "aliases: [Pay grid]")})
    garden_import([shared_topic])

    topic = Topic.objects.get(slug="pay")
    assert "Q3 layoff list" not in topic.aliases and "Pay grid" in topic.aliases
    assert retrieve(ALIAS_QUESTION).empty


def test_a_deleted_note_s_alias_leaves_the_topic_it_shared(shared_topic):
    (shared_topic / "Pay.md").unlink()
    garden_write(shared_topic, {"Other.md": "# Other\n\nA note so that one of three is gone, not half.\n"})
    garden_import([shared_topic])

    assert Article.objects.get(slug="pay").retired_at is not None
    assert "Q3 layoff list" not in Topic.objects.get(slug="pay").aliases
    assert retrieve(ALIAS_QUESTION).empty


def test_the_review_queue_filters_by_live_topics_only(garden):
    editor = client_as("editor")
    assert SECRET_TITLE in reader_sees(editor, "/review/")[1]  # while public, its topic is a filter

    make_private_by_flag(garden)
    garden_import([garden])

    status, page = reader_sees(editor, "/review/")
    assert status == 200 and SECRET_TITLE not in page and "payroll-zephyr" not in page
    assert "Handbook" in page  # the live topics are still there


CHART = PNG + b"salary chart"


def test_an_image_only_a_withheld_note_shows_is_not_served(garden):
    garden_write(
        garden,
        {
            "Pay review.md": (garden / "Pay review.md").read_text() + "\n\n![[band-chart.png]]\n",
            "Pictures/band-chart.png": CHART,
        },
    )
    garden_import([garden])
    reader = client_as("reader")
    [url] = re.findall(r'<img src="([^"]+)"', reader_sees(reader, PAGE)[1])
    shown = reader.get(url)
    assert shown.status_code == 200 and shown.content == CHART
    assert "immutable" not in shown["Cache-Control"] and "public" not in shown["Cache-Control"]

    make_private_by_flag(garden)
    garden_import([garden])

    assert reader.get(url).status_code == 404
    assert Client().get(url).status_code == 404


def test_an_image_a_public_note_also_shows_is_still_served(garden):
    line = "\n\n![[band-chart.png]]\n"
    garden_write(
        garden,
        {
            "Pay review.md": (garden / "Pay review.md").read_text() + line,
            "Handbook.md": (garden / "Handbook.md").read_text() + line,
            "Pictures/band-chart.png": CHART,
        },
    )
    garden_import([garden])
    make_private_by_flag(garden)
    garden_import([garden])

    [url] = re.findall(r'<img src="([^"]+)"', reader_sees(client_as("reader"), "/articles/handbook/")[1])
    assert client_as("reader").get(url).content == CHART
