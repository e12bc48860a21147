"""A note's audiences as a sync decides them: its front matter, else Logseq's `audience::`, else the garden's
`.gardenaccess` rules, else everyone; written wrongly, the note is withheld and the sync names it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from garden.audience_marks import AUDIENCE_WRONG
from garden.models import Article, Audience, Sync
from garden.sync import garden_import
from garden.sync.access import ACCESS_FILE, ACCESS_WRONG, AUDIENCE_UNKNOWN
from garden.walk import RULES_FILE_MAX_BYTES, RULES_LINK, RULES_NOT_A_FILE, RULES_TOO_LARGE
from tests.factories import garden_write

pytestmark = pytest.mark.django_db

BODY = "The cooperative keeps its records in the glasshouse office.\n"


@pytest.fixture(autouse=True)
def audiences() -> None:
    for name in ("hr", "board"):
        Audience.objects.create(name=name)


def audiences_of(slug: str) -> list[str]:
    return Article.objects.get(slug=slug).audiences


def test_front_matter_then_logseq_property_then_folder_rule_then_everyone(tmp_path: Path) -> None:
    garden = garden_write(
        tmp_path / "g",
        {
            ACCESS_FILE: "hr/: hr\nhr/open-*.md: everyone\n",
            "hr/Pay.md": BODY,
            "hr/Board pay.md": f"---\naudiences: [board, hr]\n---\n{BODY}",
            "hr/Logseq pay.md": f"audience:: board\n\n{BODY}",
            "hr/open-day.md": BODY,
            "hr/Lunch.md": f"---\naudience: everyone\n---\n{BODY}",
            "Lunch menu.md": BODY,
        },
    )
    report = garden_import([garden])
    assert not report.failures
    assert audiences_of("hr-pay") == ["hr"]
    assert audiences_of("hr-board-pay") == ["board", "hr"]
    assert audiences_of("hr-logseq-pay") == ["board"]
    assert audiences_of("hr-open-day") == []
    assert audiences_of("hr-lunch") == []
    assert audiences_of("lunch-menu") == []


def test_a_changed_rule_moves_an_unchanged_note_to_its_new_audience(tmp_path: Path) -> None:
    garden = garden_write(tmp_path / "g", {"hr/Pay.md": BODY})
    garden_import([garden])
    assert audiences_of("hr-pay") == []
    garden_write(garden, {ACCESS_FILE: "hr/: hr\n"})
    garden_import([garden])
    assert audiences_of("hr-pay") == ["hr"]
    assert Article.objects.live().filter(slug="hr-pay").count() == 0  # a visitor no longer reads it


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        (
            {"Pay.md": f"---\naudience: {{team: hr}}\n---\n{BODY}"},
            AUDIENCE_WRONG.format(value={"team": "hr"}),
        ),
        ({"Pay.md": f"---\naudience: payroll\n---\n{BODY}"}, AUDIENCE_UNKNOWN.format(names="payroll")),
        ({ACCESS_FILE: "hr/: [hr\n", "Pay.md": BODY}, ACCESS_WRONG.format(reason="not valid YAML")),
        ({ACCESS_FILE: "- hr\n", "Pay.md": BODY}, ACCESS_WRONG.format(reason="not a map")),
    ],
    ids=["not-a-name", "unknown-audience", "bad-yaml", "not-a-map"],
)
def test_an_audience_written_wrongly_withholds_the_note_and_names_it(
    tmp_path: Path, files: dict[str, str], reason: str
) -> None:
    garden = garden_write(tmp_path / "g", {"Pay.md": BODY, "Lunch.md": f"---\naudience: hr\n---\n{BODY}"})
    garden_import([garden])
    assert Article.objects.live().filter(slug="pay").exists()
    garden_write(garden, files)
    report = garden_import([garden])
    article = Article.objects.get(slug="pay")
    assert article.withheld and reason in article.withheld_reason
    assert [str(garden / "Pay.md"), reason] in Sync.objects.latest().failures
    assert any(reason in failure for _, failure in report.failures)
    assert not Article.objects.get(slug="lunch").withheld  # its own mark: the broken rules are not its


def _access_linked(garden: Path) -> None:
    (garden.parent / "open.yaml").write_text("nothing/: hr\n")  # would let Pay.md be read by everyone
    (garden / ACCESS_FILE).symlink_to(garden.parent / "open.yaml")


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (_access_linked, RULES_LINK),
        (lambda garden: os.mkfifo(garden / ACCESS_FILE), RULES_NOT_A_FILE.format(kind="named pipe")),
        (
            lambda garden: (garden / ACCESS_FILE).write_text("# x\n" * (RULES_FILE_MAX_BYTES // 4 + 1)),
            RULES_TOO_LARGE,
        ),
    ],
    ids=["symlink", "named-pipe", "too-large"],
)
def test_a_gardenaccess_that_is_a_link_a_pipe_or_too_long_withholds_as_one_written_wrongly(
    tmp_path: Path, make, why: str
) -> None:
    garden = garden_write(tmp_path / "g", {"Pay.md": BODY, "Lunch.md": f"---\naudience: hr\n---\n{BODY}"})
    garden_import([garden])
    assert Article.objects.live().filter(slug="pay").exists()
    make(garden)  # a pipe with no writer would hold the sync for ever were it opened to be read
    report = garden_import([garden])
    reason = ACCESS_WRONG.format(reason=why)
    article = Article.objects.get(slug="pay")
    assert article.withheld and reason in article.withheld_reason
    assert [str(garden / "Pay.md"), reason] in Sync.objects.latest().failures
    assert any(reason in failure for _, failure in report.failures)
    assert not Article.objects.get(slug="lunch").withheld  # its own mark: the unread rules are not its
