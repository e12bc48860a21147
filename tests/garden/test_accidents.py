"""Nothing is retired by an accident: a garden folder that is missing, empty (an unmounted disk, the empty
folder Docker makes for a missing bind source) or unreadable, or a sync that would retire more than half the
garden at once, changes nothing and says why, on the command line, the logs page and `/api/health`; the
`--allow-mass-retire` flag does it on purpose."""

import json
import os
import shutil
from html import escape
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from garden.models import Article, Sync
from garden.sync import garden_import
from garden.sync.importing import GARDEN_EMPTY, GARDEN_MISSING, MASS_RETIRE, ON_PURPOSE
from tests.factories import garden_write, login
from verifier.health import SYNC_REFUSED_UNNAMED

pytestmark = pytest.mark.django_db

NOTES = {
    f"Hives/{name}.md": f"The {name} hive stands in the orchard and holds {n} frames of brood and stores."
    for n, name in enumerate(["Bramble", "Clover", "Heather", "Linden", "Sorrel", "Willow"], start=8)
}


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    folder = garden_write(tmp_path / "garden", NOTES)
    garden_import([folder])
    return folder


def live() -> int:
    return Article.objects.live().filter(path__startswith="Hives/").count()


def refusal_shown(message: str) -> None:
    """The refusal is on the logs page and in /api/health, for operators."""
    operator = Client()
    login(operator, "operator")
    health = json.loads(operator.get("/api/health").content)
    assert health["status"] == "degraded"
    assert any(message in problem for problem in health["problems"])
    assert health["garden"]["refused"].startswith(message)
    assert escape(message) in operator.get("/operators/logs/").content.decode()


def test_an_unmounted_disk_retires_nothing(garden, capsys):
    for child in garden.iterdir():
        shutil.rmtree(child)  # what an unmounted mount point looks like: the folder, empty

    with pytest.raises(CommandError, match="holds no notes"):
        call_command("import_garden", str(garden), "--no-progress")

    assert live() == 6
    message = GARDEN_EMPTY.format(folder=garden, count=6, reason="")
    assert message + ON_PURPOSE in capsys.readouterr().err
    refusal_shown(message)


def test_only_operators_read_where_the_garden_is(garden):
    shutil.rmtree(garden)
    garden_import([garden])
    message = GARDEN_MISSING.format(folder=garden, count=6)
    refusal_shown(message)  # operators: the folder and the reason

    for caller in (Client(), client_as_reader()):
        response = caller.get("/api/health")
        assert str(garden) not in response.content.decode()
        health = json.loads(response.content)
        assert health["status"] == "degraded" and SYNC_REFUSED_UNNAMED in health["problems"]
        assert health["garden"]["refused"] == SYNC_REFUSED_UNNAMED


def client_as_reader() -> Client:
    reader = Client()
    login(reader, "reader")
    return reader


def test_a_missing_folder_retires_nothing(garden):
    shutil.rmtree(garden)

    report = garden_import([garden])

    assert live() == 6 and report.retired == 0
    assert report.refused == [(str(garden), GARDEN_MISSING.format(folder=garden, count=6) + ON_PURPOSE)]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its permissions")
def test_an_unreadable_folder_retires_nothing(garden):
    garden.chmod(0)
    try:
        report = garden_import([garden])
    finally:
        garden.chmod(0o755)
    assert live() == 6 and report.retired == 0 and "cannot be read" in report.refused[0][1]


def test_a_sync_that_would_retire_more_than_half_changes_nothing(garden):
    for name in ["Bramble", "Clover", "Heather", "Linden"]:
        (garden / "Hives" / f"{name}.md").unlink()
    garden_write(garden, {"Hives/Sorrel.md": NOTES["Hives/Sorrel.md"] + " It was requeened in May."})

    report = garden_import([garden])

    assert live() == 6 and (report.retired, report.revised) == (0, 0)  # not even the edit: nothing changed
    message = MASS_RETIRE.format(missing=4, count=6)
    assert report.refused == [(str(garden), message + ON_PURPOSE)]
    assert Sync.objects.latest().refused == message + ON_PURPOSE
    refusal_shown(message)


def test_half_or_less_is_an_ordinary_sync(garden):
    for name in ["Bramble", "Clover", "Heather"]:
        (garden / "Hives" / f"{name}.md").unlink()

    report = garden_import([garden])

    assert (report.retired, report.refused) == (3, [])
    assert live() == 3


def test_on_purpose_the_garden_can_be_emptied(garden, capsys):
    for child in garden.iterdir():
        shutil.rmtree(child)

    call_command("import_garden", str(garden), "--no-progress", "--allow-mass-retire")

    assert live() == 0
    assert "Retired 6 note(s)" in capsys.readouterr().out


def test_a_garden_made_private_wholesale_is_withheld_not_refused(garden):
    """Privacy is never an accident to guard against: failing closed needs no flag."""
    garden_write(garden, {".gardenignore": "Hives/\n"})

    report = garden_import([garden])

    assert report.refused == [] and report.withheld == 6 and live() == 0


def test_the_last_syncs_are_kept(garden, monkeypatch):
    monkeypatch.setattr("garden.sync.report.SYNCS_KEPT", 2)
    for _ in range(3):
        garden_import([garden])
    assert Sync.objects.count() == 2
