"""Editors' pages keep audiences as the reader pages do: the review queue shows a flagged claim's quote and passage
as its editor's reader pages would (an `hr` note's name and words for `hr` only), and the admin lists only the
topics an editor may see and never changes a note's audiences or path (the folder is the truth)."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from garden.audiences import members_add
from garden.models import Article, Topic
from garden.sync import garden_import
from tests.factories import garden_write
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
    user = User.objects.create_user(name, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    if audience:
        members_add(audience, [name])
    client = Client()
    client.force_login(user)
    return client


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
