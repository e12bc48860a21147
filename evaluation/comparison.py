"""Two Verify-all runs side by side."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.audiences import audiences_differ
from evaluation.models import VerifyRun
from evaluation.report import FIGURES, stored_report


@dataclass(frozen=True)
class FigureChange:
    """One headline figure of two runs, with the change from the first to the second (None where either has
    none)."""

    figure: str
    label: str
    first: float | None
    second: float | None
    change: float | None


def runs_not_comparable(first: VerifyRun, second: VerifyRun) -> str | None:
    """What the comparison says when the two runs were asked as different audiences; None when the same."""
    return audiences_differ(first.audience, second.audience)


def runs_compare(first: VerifyRun, second: VerifyRun) -> list[FigureChange]:
    """Each headline figure of two runs side by side, with the change from the first to the second."""
    reports = stored_report(first), stored_report(second)
    rows = []
    for key, label in FIGURES:
        a, b = (getattr(report, key) if report else None for report in reports)
        change = round(b - a, 4) if a is not None and b is not None else None
        rows.append(FigureChange(figure=key, label=label, first=a, second=b, change=change))
    return rows
