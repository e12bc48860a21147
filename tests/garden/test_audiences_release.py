"""A note for an audience there is none of yet is withheld; `audiences add` releases it at once, with no edit of
the note and no import run by hand, to that audience's members only. A note withheld for another reason too
stays withheld."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from garden.answering.asking import REFUSAL_TEXT
from garden.audiences import NONE_RELEASED, RELEASED
from garden.models import Article, Sync
from garden.sync import garden_import
from garden.sync.access import AUDIENCE_UNKNOWN, audiences_unknown
from tests.factories import garden_write

pytestmark = pytest.mark.django_db

PAY = "The pay review of 2025 gives every engineer on band Quillmartin a raise of eleven percent.\n"
QUESTION = "What raise does band Quillmartin get in the pay review?"


def _run(*args: str) -> str:
    out = StringIO()
    call_command("audiences", *args, stdout=out)
    return out.getvalue()


def _ask(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    call_command("ask", QUESTION, "--json", *extra)
    answer: dict[str, object] = json.loads(capsys.readouterr().out)
    return answer


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    for name in ("ada", "bob"):
        get_user_model().objects.create_user(name)
    folder = garden_write(
        tmp_path / "g",
        {
            "Pay bands.md": f"---\naudience: finance\n---\n{PAY}",
            "Lunch.md": "The canteen serves soup on Mondays.\n",
        },
    )
    report = garden_import([folder])
    assert [reason for _, reason in report.failures] == [AUDIENCE_UNKNOWN.format(names="finance")]
    return folder


def test_audiences_add_releases_the_note_at_once_to_its_members_only(
    garden: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not Article.objects.filter(title="Pay bands").exists()
    assert _ask(capsys, "--as", "ada")["answer"] == REFUSAL_TEXT

    out = _run("add", "finance", "ada")

    assert RELEASED.format(count=1, audience="finance", titles="Pay bands") in out
    article = Article.objects.get(title="Pay bands")
    assert article.audiences == ["finance"] and not article.withheld
    asked = _ask(capsys, "--as", "ada")
    assert not asked["refused"] and article.slug in {c["article"] for c in asked["citations"]}  # type: ignore[attr-defined]
    assert _ask(capsys, "--as", "bob")["answer"] == REFUSAL_TEXT
    assert _ask(capsys)["answer"] == REFUSAL_TEXT
    assert (garden / "Pay bands.md").read_text().startswith("---\naudience: finance")  # the note as written

    assert "Released" not in _run("add", "finance", "bob")  # nothing waits any more: no second sync


def test_an_edit_naming_a_new_audience_is_released_as_edited_not_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    get_user_model().objects.create_user("ada")
    garden = garden_write(tmp_path / "g", {"Pay bands.md": "Band Quillmartin is reviewed in March.\n"})
    garden_import([garden])
    garden_write(garden, {"Pay bands.md": f"---\naudience: finance\n---\n{PAY}"})
    garden_import([garden])
    article = Article.objects.get(title="Pay bands")
    assert article.withheld and "finance" in audiences_unknown(article.withheld_reason)

    out = _run("add", "finance", "ada")

    assert RELEASED.format(count=1, audience="finance", titles="Pay bands") in out
    article.refresh_from_db()
    assert article.audiences == ["finance"] and not article.withheld  # for finance, not everyone as before
    assert "eleven percent" in article.revisions.get(superseded=False).body
    assert _ask(capsys)["answer"] == REFUSAL_TEXT


def test_a_note_withheld_for_another_reason_too_stays_withheld(tmp_path: Path) -> None:
    get_user_model().objects.create_user("ada")
    garden = garden_write(
        tmp_path / "g",
        {
            "Pay bands.md": f"---\naudience: finance\n---\n{PAY}",
            "Board pay.md": f"---\naudiences: [finance, board]\n---\n{PAY}",
            "Draft pay.md": f"---\naudience: finance\ndraft: true\n---\n{PAY}",
            "Lunch.md": "The canteen serves soup on Mondays.\n",
        },
    )
    garden_import([garden])

    out = _run("add", "finance", "ada")

    assert RELEASED.format(count=1, audience="finance", titles="Pay bands") in out
    assert not Article.objects.filter(title__in=["Board pay", "Draft pay"]).exists()
    failures = dict(Sync.objects.latest().failures)
    assert failures[str(garden / "Board pay.md")] == AUDIENCE_UNKNOWN.format(names="board")

    assert RELEASED.format(count=1, audience="board", titles="Board pay") in _run("add", "board", "ada")
    assert Article.objects.get(title="Board pay").audiences == ["board", "finance"]
    assert not Article.objects.filter(title="Draft pay").exists()  # private: never released


def test_none_released_is_said(tmp_path: Path) -> None:
    get_user_model().objects.create_user("ada")
    garden = garden_write(tmp_path / "g", {"Board pay.md": f"---\naudiences: [finance, board]\n---\n{PAY}"})
    garden_import([garden])
    assert NONE_RELEASED.format(audience="finance") in _run("add", "finance", "ada")
    assert not Article.objects.filter(title="Board pay").exists()


def test_the_reason_names_the_unknown_audiences() -> None:
    assert audiences_unknown(AUDIENCE_UNKNOWN.format(names="board, finance")) == ("board", "finance")
    assert audiences_unknown("cannot be imported: " + AUDIENCE_UNKNOWN.format(names="hr")) == ("hr",)
    assert audiences_unknown("made private") == ()
