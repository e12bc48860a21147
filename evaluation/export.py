"""A Verify-all run exported: one row per golden question (CSV), or the run, its report and those rows (JSON)."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from claimcheck.terms import ClaimStatus
from evaluation.audiences import audience_named
from evaluation.models import VerifyRun
from evaluation.report import report_shown
from garden.models import Answer
from garden.readers import ANONYMOUS, Reader
from garden.selectors import ANSWER_WITHHELD
from verifier.models import Claim, Verification
from verifier.selectors import answers_label, answers_question

CSV_FIELDS = [
    "code",
    "category",
    "question",
    "asked_as",
    "status",
    "refused",
    "abstained",
    "answers_question",
    "answers_question_label",
    "verdict",
    "risk_label",
    "claims",
    "verified",
    "unverified",
    "contradicted",
    "answer",
]
# A spreadsheet runs a cell that starts with one of these as a formula (`=HYPERLINK(...)` in a question or an
# answer would be a link, or worse, in the operator's sheet); such a cell is written after an apostrophe,
# which spreadsheets show as text and hide (OWASP's advice on CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """`value` as a spreadsheet will show it, never run it: text starting like a formula gets a leading `'`."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def run_rows(run: VerifyRun, reader: Reader = ANONYMOUS) -> Iterable[dict[str, Any]]:
    """One row per golden question of the run, for CSV and JSON export, as `reader` may see it."""
    items = run.items.select_related("golden", "answer")
    answer_ids = [i.answer_id for i in items if i.answer_id]
    readable = set(Answer.objects.readable(reader).filter(pk__in=answer_ids).values_list("pk", flat=True))
    verifications = {v.answer_id: v for v in Verification.objects.filter(answer_id__in=answer_ids)}
    counts: dict[int, Counter[str]] = defaultdict(Counter)
    for answer_id, status in Claim.objects.filter(
        verification__answer_id__in=list(verifications), is_claim=True
    ).values_list("verification__answer_id", "status"):
        counts[answer_id][status] += 1
    for item in items:
        answer = item.answer
        verification = verifications.get(item.answer_id) if item.answer_id else None
        tally = counts.get(item.answer_id or 0, Counter())
        yield {
            "code": item.golden.code,
            "category": item.golden.category,
            "question": item.golden.question,
            "asked_as": audience_named(item.asked_as),
            "status": item.status,
            "refused": bool(answer and answer.refused),
            "abstained": bool(answer and answer.abstained),
            "answers_question": item.answers_question,
            # What the page says (`verifier.selectors.answers_question`), beside whether it states the expected fact.
            "answers_question_label": answers_label(answers_question(answer)) if answer else "",
            "verdict": verification.verdict if verification else "",
            "risk_label": verification.risk_label if verification else "",
            "claims": sum(tally.values()),
            "verified": tally[ClaimStatus.VERIFIED],
            "unverified": tally[ClaimStatus.UNVERIFIED],
            "contradicted": tally[ClaimStatus.CONTRADICTED],
            "answer": (answer.text if answer.pk in readable else ANSWER_WITHHELD) if answer else item.error,
        }


def run_csv(run: VerifyRun, reader: Reader = ANONYMOUS) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS)
    writer.writeheader()
    writer.writerows(
        {key: spreadsheet_safe(value) for key, value in row.items()} for row in run_rows(run, reader)
    )
    return buffer.getvalue()


def run_json(run: VerifyRun, reader: Reader = ANONYMOUS) -> str:
    """The run, its report as it may be shown today to `reader` (with the judges that ran) and its rows."""
    report = report_shown(run, reader)
    payload = {
        "run": run.pk,
        "label": run.label,
        "status": run.status,
        "mode": run.mode,
        "audience": audience_named(run.audience),
        "report": report.as_dict() if report else {},
        "items": list(run_rows(run, reader)),
    }
    return json.dumps(payload, indent=2)
