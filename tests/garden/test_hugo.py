"""A Hugo site's content tree is a garden: a section's `_index.md` is its page (not private, though its name
starts with '_'), TOML (`+++`) front matter is read as YAML's is (title, date, tags, and `draft = true`), and
other `_` names stay private."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from django.core.management import call_command

from garden.formats.markdown import TOML_BROKEN_PRIVATE
from garden.models import Article, Passage
from garden.sync import garden_import
from garden.walk import garden_walk
from tests.factories import garden_write

pytestmark = pytest.mark.django_db

HUGO = Path(__file__).resolve().parent / "gardens" / "hugo"


def article(path: str) -> Article:
    return Article.objects.get(path=path)


def test_a_hugo_tree_imports_its_section_pages_and_reads_toml_front_matter(capsys):
    call_command(
        "import_garden", str(HUGO), "--no-progress"
    )  # raises unless every note imported or was left out
    out = capsys.readouterr().out
    assert "Skipped 3: 2 in private places, 1 marked private." in out

    assert article("content/_index").title == "Hill Farm Journal"  # TOML front matter, a section's page
    assert article("content/posts/_index").title == "Posts"
    assert article("content/about/index").title == "About the farm"
    lambing = article("content/posts/lambing-2026")
    assert lambing.title == "Lambing, spring 2026" and set(lambing.tags) == {"sheep", "lambing"}
    revision = lambing.current_revision
    assert revision is not None and revision.date == datetime.date(2026, 3, 14)
    assert "+++" not in revision.body and "title =" not in revision.body

    # A draft (TOML `draft = true`), a `_` file that is no section page, and a `_` folder stay out.
    assert not Article.objects.filter(
        path__in=["content/posts/fencing-plan", "content/posts/_notes"]
    ).exists()
    assert not Article.objects.filter(path__startswith="content/_drafts").exists()
    assert not Passage.objects.filter(text__contains="ZEPHYRHUGO").exists()


def test_only_the_section_page_is_public_among_underscore_names(tmp_path):
    folder = garden_write(
        tmp_path / "site",
        {
            "content/_index.md": "Home.",
            "content/posts/_index.md": "Posts.",
            "content/posts/_index.MD.bak.md": "a copy",
            "content/posts/_Index.md": "another case, another name: private",
            "content/_private/_index.md": "a section in a private folder",
        },
    )
    walk = garden_walk(folder, {".md"})
    files = [path.relative_to(folder).as_posix() for path in walk.files]
    assert files == ["content/_index.md", "content/posts/_index.md"]
    assert len(walk.private) == 3


def test_toml_front_matter_that_cannot_be_read_fails_and_a_draft_in_it_stays_withheld(tmp_path):
    folder = garden_write(
        tmp_path / "site",
        {
            "Home.md": '+++\ntitle = "Home"\n+++\nThe farm\'s home page.\n',
            "Broken.md": "+++\ntitle = Unquoted\n+++\nText.\n",
            "Broken draft.md": '+++\ntitle = "Pay: 2026\ndraft = true\n+++\nZEPHYRHUGO 204 the pay review.\n',
        },
    )
    report = garden_import([folder])
    failures = {Path(path).name: reason for path, reason in report.failures}
    assert failures["Broken.md"].startswith("front matter is not valid TOML")
    assert failures["Broken draft.md"].endswith(
        TOML_BROKEN_PRIVATE.split("), ", 1)[1].format(marker="draft: true")
    )
    assert article("Home").title == "Home"
    assert not Passage.objects.filter(text__contains="ZEPHYRHUGO").exists()
