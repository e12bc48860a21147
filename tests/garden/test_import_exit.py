"""An import's exit status means something: 0 when every note was imported or left out on purpose (the reasons
counted by kind in the summary), 1 when a note that should have been imported could not be, 3 when a garden was
refused as an accident. The command raises CommandError with that status, which `manage.py` exits with (Django's
`run_from_argv`, which also closes the test's database connection, so it is not called here)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from garden.formats.pdf.reading import NO_TEXT_LAYER
from garden.management.commands.import_garden import EXIT_FAILED, EXIT_REFUSED, FILES_FAILED
from garden.models import Article, Sync
from garden.walk import LINK_OUTSIDE
from tests.factories import garden_write, login
from tests.garden.pdfmaker import SCANNED, pdf_write

pytestmark = pytest.mark.django_db


def exit_status(*arguments: str) -> int:
    """The status `manage.py import_garden ARGUMENTS` exits with."""
    try:
        call_command("import_garden", *arguments, "--no-progress")
    except CommandError as error:
        return error.returncode
    return 0


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    """A garden whose every file imports or is left out on purpose."""
    folder = garden_write(
        tmp_path / "g",
        {
            "Orchard.md": "The orchard has 14 apple trees.",
            "Bees/Hives.md": "The apiary has six hives.",
            "Plans.md": "---\ndraft: true\n---\nA plan not ready to publish.\n",
            "_drafts/Pay.md": "The pay review, private by its folder.",
        },
    )
    (folder / "passwd.md").symlink_to("/etc/passwd")
    pdf_write(folder / "Scans" / "Letter.pdf", [SCANNED])
    return folder


def test_a_garden_whose_every_note_imported_or_was_left_out_on_purpose_exits_0(garden, capsys):
    assert exit_status(str(garden)) == 0
    out, err = capsys.readouterr()
    assert (
        "Skipped 4: 1 link outside the garden, 1 marked private, 1 in a private place, 1 scanned PDF." in out
    )
    assert f"Skipped {garden / 'passwd.md'}: {LINK_OUTSIDE.format(target='/etc/passwd')}" in out
    assert f"Skipped {garden / 'Scans' / 'Letter.pdf'}: {NO_TEXT_LAYER}" in out
    assert "FAILED" not in err
    assert Article.objects.filter(path__in=["Orchard", "Bees/Hives"]).count() == 2
    # The logs page and /api/health read the same counts from the sync's record.
    assert Sync.objects.latest("started_at").counts["skipped"] == {
        "private": 1,
        "marked private": 1,
        "link outside the garden": 1,
        "scanned PDF": 1,
    }

    assert exit_status(str(garden)) == 0  # and again, unchanged: a scheduled sync is not a failure each time


def test_a_note_that_should_have_been_imported_and_could_not_be_exits_1(garden, capsys):
    garden_write(garden, {"Broken.md": "---\ntitle: [unclosed\n---\nText.\n"})
    with pytest.raises(CommandError, match=re.escape(FILES_FAILED.format(count=1))) as failed:
        call_command("import_garden", str(garden), "--no-progress")
    assert failed.value.returncode == EXIT_FAILED == 1
    out, err = capsys.readouterr()
    assert f"FAILED {garden / 'Broken.md'}: front matter is not valid YAML" in err
    assert "Skipped 4:" in out  # the summary still counts what was left out on purpose
    assert Article.objects.filter(path="Orchard").exists()  # the others imported


def test_a_refused_sync_exits_3_and_changes_nothing(garden, capsys):
    assert exit_status(str(garden)) == 0
    for child in garden.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    assert exit_status(str(garden)) == EXIT_REFUSED == 3
    assert "holds no notes" in capsys.readouterr().err
    assert Article.objects.filter(path="Orchard", retired_at__isnull=True).exists()


def test_a_missing_garden_exits_1(tmp_path, capsys):
    assert exit_status(str(tmp_path / "nowhere")) == EXIT_FAILED
    assert "no such file or folder" in capsys.readouterr().err


def test_the_logs_page_counts_what_the_last_sync_left_out_on_purpose(garden, client):
    exit_status(str(garden))
    login(client, "operator")
    page = client.get("/operators/logs/").content.decode()
    assert (
        "Left out on purpose: 1 link outside the garden, 1 marked private, 1 in a private place, 1 scanned PDF."
        in page
    )
