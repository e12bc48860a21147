"""Verify-all per audience: a run is asked as an audience, a question naming its own is asked as that one, and a
question only another audience's notes answer counts as out of scope (it must be refused)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command

from evaluation.audiences import DIFFERENT_AUDIENCES, UNKNOWN_AUDIENCE
from evaluation.comparison import runs_not_comparable
from evaluation.export import run_csv
from evaluation.models import RunStatus, VerifyRun
from evaluation.running import verify_run_item
from evaluation.starting import verify_run_start
from garden.audiences import members_add
from garden.golden import golden_load
from garden.models import Article
from garden.sync import garden_import
from tests.factories import garden_write, login, page_text

pytestmark = pytest.mark.django_db

HR_SLUG = "hr-quillmartin-pay"
HR_NOTE = (
    "---\ntitle: Quillmartin pay review\n---\n"
    "The Quillmartin pay review of 2025 gives every engineer on band Zorvath a raise of eleven percent. "
    "The Quillmartin review committee meets in the glasshouse every March to set the bands.\n"
)
HR_QUESTION = "What raise does the Quillmartin pay review give engineers on band Zorvath?"


@pytest.fixture
def hr_golden(tmp_path: Path) -> Path:
    """A tiny garden with one note for hr, and a golden set asking about it twice (once naming hr as the
    audience it is asked as), beside a question out of scope for everyone."""
    folder = garden_write(
        tmp_path / "garden", {".gardenaccess": "hr/: hr\n", "hr/Quillmartin pay.md": HR_NOTE}
    )
    members_add("hr", [])
    members_add("staff", [])
    assert not garden_import([folder]).failures
    assert Article.objects.get(slug=HR_SLUG).audiences == ["hr"]
    path = tmp_path / "golden.yaml"
    path.write_text(
        yaml.safe_dump(
            [
                {
                    "id": "hr1",
                    "category": "single_fact",
                    "question": HR_QUESTION,
                    "expected_articles": [HR_SLUG],
                    "answer": "eleven percent",
                },
                {
                    "id": "hr2",
                    "category": "single_fact",
                    "question": HR_QUESTION,
                    "expected_articles": [HR_SLUG],
                    "audience": "hr",
                },
                {"id": "oos", "category": "out_of_scope", "question": "How long should sourdough proof?"},
            ]
        )
    )
    return path


def run_as(audience: str, golden_file: Path, label: str | None = None) -> VerifyRun:
    run = verify_run_start(
        label=label or f"as {audience or 'default'}", queue=False, golden_file=golden_file, audience=audience
    )
    for item_id in run.items.values_list("pk", flat=True):
        verify_run_item(item_id=item_id)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    return run


def items_of(run: VerifyRun) -> dict[str, tuple[str, bool, bool]]:
    """Each question's (audience it was asked as, refused, another audience could answer it)."""
    return {
        item.golden.code: (
            item.asked_as,
            item.answer is not None and item.answer.refused,
            item.beyond_audience,
        )
        for item in run.items.select_related("golden", "answer")
    }


def test_a_golden_question_may_name_the_audience_it_is_asked_as(hr_golden: Path, tmp_path: Path) -> None:
    entries = {entry.id: entry for entry in golden_load(hr_golden)}
    assert (entries["hr1"].audience, entries["hr2"].audience) == ("", "hr")
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump([{"category": "single_fact", "question": "Q?", "audience": ["hr"]}]))
    with pytest.raises(ValueError, match="entry 1's 'audience' is the name of one audience"):
        golden_load(broken)


def test_a_run_as_everyone_refuses_the_hr_question_and_counts_it_out_of_scope(hr_golden: Path) -> None:
    run = run_as("", hr_golden)
    assert items_of(run) == {
        "hr1": ("", True, True),  # asked as everyone: refused, as it must be
        "hr2": ("hr", False, False),  # names hr: asked as hr whatever the run's audience, and answered
        "oos": ("", True, False),
    }
    report = run.report
    assert report["audience"] == "" and report["beyond_audience"] == 1
    # hr1 and oos are out of scope for this run and both were refused; hr2 is the one in-scope question.
    assert (report["out_of_scope_refused"], report["in_scope_answered"], report["in_scope_refused"]) == (
        1,
        1,
        0,
    )
    # The refusal was the right answer to a question another audience could answer.
    assert run.items.get(golden__code="hr1").answers_question is True


def test_a_run_as_hr_answers_the_hr_question(hr_golden: Path) -> None:
    run = run_as("hr", hr_golden)
    assert items_of(run) == {
        "hr1": ("hr", False, False),
        "hr2": ("hr", False, False),
        "oos": ("hr", True, False),
    }
    report = run.report
    assert report["audience"] == "hr" and report["beyond_audience"] == 0
    assert (report["out_of_scope_refused"], report["in_scope_answered"]) == (1, 1)
    assert run.items.get(golden__code="hr1").answers_question is True  # it states "eleven percent"


def test_a_run_of_another_audience_cannot_see_the_hr_note_either(hr_golden: Path) -> None:
    run = run_as("staff", hr_golden)
    assert items_of(run)["hr1"] == ("staff", True, True)
    assert run.report["out_of_scope_refused"] == 1 and run.report["beyond_audience"] == 1


def test_comparing_runs_of_different_audiences_says_their_figures_are_not_comparable(
    hr_golden: Path, client
) -> None:
    everyone, hr, hr_again = run_as("", hr_golden), run_as("hr", hr_golden), run_as("hr", hr_golden, "again")
    said = DIFFERENT_AUDIENCES.format(first="hr", second="everyone")
    assert said == (
        "These runs were asked as different audiences: hr and everyone; their figures are not comparable."
    )
    assert runs_not_comparable(hr, everyone) == said
    assert runs_not_comparable(hr, hr_again) is None

    login(client, "operator")
    page = page_text(
        client.get(f"/operators/runs/compare/?first={hr.pk}&second={everyone.pk}").content.decode()
    )
    assert said in page
    same = page_text(
        client.get(f"/operators/runs/compare/?first={hr.pk}&second={hr_again.pk}").content.decode()
    )
    assert "not comparable" not in same and "Both asked as: hr." in same


def test_the_report_pages_and_exports_show_the_audience_a_run_was_asked_as(hr_golden: Path, client) -> None:
    run = run_as("", hr_golden)
    login(client, "operator")
    page = page_text(client.get(f"/operators/runs/{run.pk}/").content.decode())
    assert "Asked as: <strong>everyone</strong>" in page
    assert "(1 of them another audience could answer)" in page
    runs = page_text(client.get("/operators/runs/").content.decode())
    assert '<td data-label="Asked as">everyone</td>' in runs
    assert '<option value="hr">hr</option>' in runs  # the form offers the garden's audiences

    exported = client.get(f"/operators/runs/{run.pk}/export.json").json()
    assert exported["audience"] == "everyone" and exported["report"]["beyond_audience"] == 1
    rows = {row["code"]: row for row in csv.DictReader(io.StringIO(run_csv(run)))}
    assert (rows["hr1"]["asked_as"], rows["hr2"]["asked_as"]) == ("everyone", "hr")


def test_the_runs_page_starts_a_run_as_the_audience_chosen(hr_golden: Path, client, monkeypatch) -> None:
    monkeypatch.setattr("evaluation.starting.DEFAULT_FILE", hr_golden)
    monkeypatch.setattr("evaluation.starting.transaction.on_commit", lambda queue: None)
    login(client, "operator")
    response = client.post("/operators/runs/", {"label": "hr's garden", "audience": "hr"})
    run = VerifyRun.objects.get(label="hr's garden")
    assert response.status_code == 302 and run.audience == "hr"

    response = client.post("/operators/runs/", {"label": "typo", "audience": "hrr"}, follow=True)
    said = UNKNOWN_AUDIENCE.format(name="hrr", known="hr, staff")
    assert said in response.content.decode().replace("&ldquo;", "“").replace("&rdquo;", "”")
    assert not VerifyRun.objects.filter(label="typo").exists()


def test_the_command_asks_as_the_audience_named(hr_golden: Path, capsys) -> None:
    call_command(
        "verify_all", "--label", "cli", "--inline", "--golden", str(hr_golden), "--audience", "staff"
    )
    out = capsys.readouterr().out
    assert "Asked as: staff" in out and "of them 1 another audience could answer" in out
    assert VerifyRun.objects.get(label="cli").audience == "staff"

    call_command(
        "verify_all", "--label", "json", "--inline", "--golden", str(hr_golden), "--audience", "hr", "--json"
    )
    assert json.loads(capsys.readouterr().out)["audience"] == "hr"

    with pytest.raises(CommandError, match="There is no audience named “board”"):
        call_command("verify_all", "--inline", "--golden", str(hr_golden), "--audience", "board")

    # The default audience by its name is the default audience, whether or not an audience of that name exists.
    call_command(
        "verify_all", "--label", "named", "--inline", "--golden", str(hr_golden), "--audience", "everyone"
    )
    assert VerifyRun.objects.get(label="named").audience == ""
    assert "Asked as: everyone" in capsys.readouterr().out
