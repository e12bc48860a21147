"""The citation gate's tree is never a garden: a CRITIC_SOURCE_TREE that is a garden's folder, lies inside one or
holds one is refused, and then no `path:line` citation tells whether a file is there or what is on its lines."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core import checks
from django.core.management import call_command

from claimcheck.critics.citation_gate.paths import audit_paths
from tests.conftest import SAMPLE_FOLDERS
from tests.factories import answer_for
from verifier import source_tree
from verifier.checking import path_citations_audit
from verifier.checks import SOURCE_TREE_REFUSED_ID
from verifier.health import health_check
from verifier.source_tree import (
    HOLDS,
    IS,
    LIES_INSIDE,
    SOURCE_TREE_REFUSED,
    SOURCE_TREE_REFUSED_UNNAMED,
    critic_source_tree,
    source_tree_refusal,
)
from verifier.verifying import critics_run

pytestmark = pytest.mark.django_db

SAMPLE = SAMPLE_FOLDERS[1]  # garden/sample/articles, as the test database holds it
# kvr-history.md's third line is `topics: [history]`: a right guess at it, and the same guess at a file that
# is not there.
RIGHT_GUESS = "`kvr-history.md:3 - topics history`"
NO_SUCH_FILE = "`kvr-histories.md:3 - topics history`"
DROPPED_UNREAD = ("dropped", "no-source-tree", True)


@pytest.fixture(autouse=True)
def told_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's process has told the operator nothing yet."""
    monkeypatch.setattr(source_tree, "_logged", set())


def fates(items: list[dict[str, object]]) -> list[tuple[object, object, object]]:
    return [(item["status"], item["reason"], item["fabricated"]) for item in items]


def refused_message(tree: Path, relation: str, garden: Path) -> str:
    return SOURCE_TREE_REFUSED.format(tree=tree.resolve(), relation=relation, garden=garden.resolve())


def test_without_the_refusal_the_gate_would_tell_what_is_on_a_note_s_line() -> None:
    # What the refusal keeps from readers: the engine alone, handed the garden, verifies the right guess.
    [right] = audit_paths(RIGHT_GUESS, SAMPLE)
    [wrong] = audit_paths(NO_SUCH_FILE, SAMPLE)
    assert (right.status, right.reason) == ("verified", "line-matches")
    assert (wrong.status, wrong.reason) == ("dropped", "file-missing")


@pytest.mark.parametrize(
    ("tree", "folder", "relation"),
    [(SAMPLE, "", IS), (SAMPLE.parent, "articles/", HOLDS)],
    ids=["the garden", "a folder holding it"],
)
def test_a_tree_that_is_or_holds_the_imported_garden_is_refused_and_tells_nothing(
    settings: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
    tree: Path,
    folder: str,
    relation: str,
) -> None:
    settings.CRITIC_SOURCE_TREE = str(tree)  # type: ignore[attr-defined]
    right_guess, no_such_file = (guess.replace("`", f"`{folder}", 1) for guess in (RIGHT_GUESS, NO_SUCH_FILE))
    message = refused_message(tree, relation, SAMPLE)
    with caplog.at_level(logging.WARNING, logger="verifier.source_tree"):
        assert critic_source_tree() is None
        right = path_citations_audit(f"- {right_guess}")
        wrong = path_citations_audit(f"- {no_such_file}")
        [gate] = [f for f in critics_run(answer_for(f"See {right_guess}.")) if f.critic == "citation_gate"]

    # The check (the API's and MCP's) and an answer's critic: the right guess reads as a wrong one.
    assert fates(right) == fates(wrong) == fates(gate.details["items"]) == [DROPPED_UNREAD]
    assert f"{folder}kvr-history.md:3 dropped (no source tree to check against)" in gate.message
    # The operator is told why, once, in the log; on the logs page and /api/health with no folder named.
    assert [record.getMessage() for record in caplog.records] == [message]
    assert "is refused" in message and f"{relation} the garden folder {SAMPLE.resolve()}" in message
    assert SOURCE_TREE_REFUSED_UNNAMED in health_check().problems
    # And by `manage.py check` (with the database, as `migrate` runs it).
    [warning] = [m for m in checks.run_checks(databases=["default"]) if m.id == SOURCE_TREE_REFUSED_ID]
    assert warning.msg == message


def test_a_tree_unrelated_to_any_garden_is_audited_as_before(
    settings: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    tree = Path(django_settings.BASE_DIR) / "claimcheck"
    settings.CRITIC_SOURCE_TREE = str(tree)  # type: ignore[attr-defined]
    lines = (tree / "critics" / "citation_gate" / "paths.py").read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, start=1) if text.startswith("LINE_RADIUS"))
    with caplog.at_level(logging.WARNING, logger="verifier.source_tree"):
        [item] = path_citations_audit(f"`critics/citation_gate/paths.py:{line} - LINE_RADIUS`")
    assert (item["status"], item["reason"]) == ("verified", "line-matches")
    assert critic_source_tree() == tree
    assert caplog.records == []
    assert SOURCE_TREE_REFUSED_UNNAMED not in health_check().problems
    assert not [m for m in checks.run_checks(databases=["default"]) if m.id == SOURCE_TREE_REFUSED_ID]


def test_a_garden_imported_into_the_tree_later_is_caught_when_the_tree_is_next_used(
    settings: pytest.FixtureRequest, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    notes = tree / "notes"
    notes.mkdir(parents=True)
    (notes / "minutes.md").write_text("# Minutes\n\nThe board met on 3 March.\n", encoding="utf-8")
    settings.CRITIC_SOURCE_TREE = str(tree)  # type: ignore[attr-defined]
    citation = "`notes/minutes.md:3 - board met March`"
    assert fates(path_citations_audit(citation)) == [("verified", "line-matches", False)]

    call_command("import_garden", str(notes), "--no-progress", verbosity=0)

    assert fates(path_citations_audit(citation)) == [DROPPED_UNREAD]
    assert source_tree.source_tree_refused() == refused_message(tree, HOLDS, notes)


def test_the_rule_is_or_inside_or_holding_and_a_hidden_clone_folder_does_not_count(tmp_path: Path) -> None:
    garden = tmp_path / "garden"
    (garden / "hr").mkdir(parents=True)
    (tmp_path / "code").mkdir()
    hidden = tmp_path / "project" / ".run" / "git"
    assert source_tree_refusal(garden, [garden]) == refused_message(garden, IS, garden)
    assert source_tree_refusal(garden / "hr", [garden]) == refused_message(garden / "hr", LIES_INSIDE, garden)
    assert source_tree_refusal(tmp_path, [garden]) == refused_message(tmp_path, HOLDS, garden)
    assert source_tree_refusal(tmp_path / "code", [garden]) == ""
    # The gate never reads a hidden folder, so a project folder with its clones under .run/ may be the tree.
    assert source_tree_refusal(tmp_path / "project", [hidden]) == ""
    assert source_tree_refusal(tmp_path / "project" / ".run", [hidden]) != ""


def test_where_git_gardens_are_cloned_is_refused_before_any_is_imported(
    settings: pytest.FixtureRequest, tmp_path: Path
) -> None:
    settings.GARDEN_GIT_DIR = str(tmp_path / "clones")  # type: ignore[attr-defined]
    settings.CRITIC_SOURCE_TREE = str(tmp_path / "clones" / "0123abcd" / "tree")  # type: ignore[attr-defined]
    assert critic_source_tree() is None
    # Read from the settings alone, so `manage.py check` says so with no database too.
    [warning] = [m for m in checks.run_checks() if m.id == SOURCE_TREE_REFUSED_ID]
    assert "lies inside the garden folder" in warning.msg
