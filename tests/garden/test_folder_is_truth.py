"""The folder is the truth: after a sync, every article's current text is its file's, whatever revisions came
before. Going back to an earlier text (an undo, a `git revert`) makes it current again, and a line removed from
the file is gone from pages, embeds, retrieval and the answers written from then on. An older copy of a garden
is imported as history only when asked to (`--history`)."""

import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from dashboard.actions.asking import ask
from garden.answering.retrieval import retrieve
from garden.models import Article, Passage
from garden.sync import garden_import
from tests.factories import garden_write
from tests.garden.test_private_stays_private import client_as

pytestmark = pytest.mark.django_db

SAFE = (
    "# Strongroom\n\nThe strongroom of the cooperative is in the cellar below the glasshouse. "
    "Its steel door was fitted in 1998 by the Ravelwick foundry."
)
SECRET_LINE = "\n\nThe safe in the strongroom opens with the combination 8841."
SECRET = "8841"
HANDBOOK = "# Handbook\n\nThe handbook says where things are kept.\n\n![[Strongroom]]"
QUESTION = "What combination opens the safe in the strongroom?"


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    folder = garden_write(tmp_path / "garden", {"Strongroom.md": SAFE, "Handbook.md": HANDBOOK})
    garden_import([folder])
    return folder


def current_body(slug: str) -> str:
    article = Article.objects.get(slug=slug)
    revision = article.current_revision
    assert revision is not None
    return revision.body


def test_an_undone_edit_takes_the_removed_line_off_every_reader_path(garden):
    garden_write(garden, {"Strongroom.md": SAFE + SECRET_LINE})
    garden_import([garden])
    reader = client_as("reader")
    assert SECRET in reader.get("/articles/strongroom/").content.decode()  # published for a while

    garden_write(garden, {"Strongroom.md": SAFE})  # the undo
    report = garden_import([garden])

    assert (report.revised, report.unchanged) == (1, 1)
    assert SECRET not in current_body("strongroom")
    assert not Passage.objects.filter(is_current=True, text__contains=SECRET).exists()
    for page in ["/articles/strongroom/", "/articles/handbook/", "/articles/"]:
        assert SECRET not in reader.get(page).content.decode(), page
    found = retrieve(QUESTION)
    assert found.sources  # the note is still found, by its text of now
    assert not Passage.objects.filter(pk__in=[hit.passage_id for hit in found.sources], text__contains=SECRET)
    fresh = ask(QUESTION, None)
    assert SECRET not in fresh.text
    assert not fresh.sources.filter(passage__text__contains=SECRET).exists()
    assert garden_import([garden]).unchanged == 2  # level with the files now


def test_going_back_and_forth_between_two_texts_shows_the_files_text_each_time(garden):
    for text in [SAFE + SECRET_LINE, SAFE, SAFE + SECRET_LINE, SAFE]:
        garden_write(garden, {"Strongroom.md": text})
        garden_import([garden])
        assert current_body("strongroom").endswith(text[-40:])
    # History keeps what happened, in order: five texts, the first and the last alike.
    assert Article.objects.get(slug="strongroom").revisions.count() == 5


def test_a_git_revert_of_a_removal_brings_the_line_back(garden):
    garden_write(garden, {"Strongroom.md": SAFE + SECRET_LINE})
    garden_import([garden])
    garden_write(garden, {"Strongroom.md": SAFE})
    garden_import([garden])
    garden_write(garden, {"Strongroom.md": SAFE + SECRET_LINE})  # reverting the removal
    garden_import([garden])
    assert SECRET in current_body("strongroom")
    assert SECRET in client_as("reader").get("/articles/strongroom/").content.decode()


def test_an_older_copy_imported_as_history_never_turns_the_clock_back(garden, tmp_path, capsys):
    older = tmp_path / "older"
    shutil.copytree(garden, older)
    garden_write(garden, {"Strongroom.md": SAFE + SECRET_LINE})
    garden_import([garden])

    call_command("import_garden", "--history", str(older), str(garden), "--no-progress")

    assert SECRET in current_body("strongroom")
    assert "Imported 0 new and 0 revised articles, 4 unchanged" in capsys.readouterr().out
    # Imported as the garden itself, the older copy is the truth.
    garden_import([older])
    assert SECRET not in current_body("strongroom")
