"""Verify-all: every golden question through the whole flow, as a Celery group, and the report of the run."""

from __future__ import annotations

import csv
import io
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from claimcheck.answer_check import answer_check
from claimcheck.terms import ClaimStatus
from garden.answering import question_ask
from garden.errors import UserFacingError
from garden.golden import DEFAULT_FILE, OUT_OF_SCOPE, golden_load
from garden.models import Answer, Article
from garden.retrieval import Thresholds, calibration_in_force
from garden.selectors import ANSWER_WITHHELD
from verifier.models import (
    Claim,
    GoldenQuestion,
    RunItemStatus,
    RunStatus,
    Verification,
    VerifyRun,
    VerifyRunItem,
)
from verifier.queueing import verification_create
from verifier.verifying import verification_run

logger = logging.getLogger(__name__)

HEADLINE = "unverified_claim_rate"
ANSWERED = (
    "answered_rate"  # the share of answers that state their question's expected fact, beside the headline
)
FIGURES = (
    ("verified_claim_rate", "Verified claim rate"),
    ("answered_rate", "Answers stating the expected fact"),
    ("unverified_claim_rate", "Unverified claim rate"),
    ("contradicted_claim_rate", "Contradicted claim rate"),
    ("refusal_rate", "Refusal rate"),
    ("out_of_scope_refused", "Correct refusals (out of scope)"),
    ("in_scope_answered", "In-scope questions answered"),
    ("in_scope_refused", "Wrong refusals (in scope)"),
)


def golden_sync(path: Path = DEFAULT_FILE) -> int:
    """Load the golden set file into the database (upsert by id; questions no longer in the file go inactive)."""
    questions = golden_load(path)
    with transaction.atomic():
        for q in questions:
            GoldenQuestion.objects.update_or_create(
                code=q.id,
                defaults={
                    "category": q.category,
                    "kind": q.kind or "",
                    "question": q.question,
                    "expected_articles": list(q.expected_articles),
                    "reference_answer": q.answer or "",
                    "outdated_fact": q.outdated_fact or "",
                    "active": True,
                },
            )
        GoldenQuestion.objects.exclude(code__in=[q.id for q in questions]).update(active=False)
    return len(questions)


RUN_FAILED = "This run failed before its report was made; the server log says why. Start a new run."
QUEUE_UNREACHABLE = "The task queue (Redis) could not be reached, so no question was run. Start the run again once it is back."


def verify_run_start(
    *, label: str, user_id: int | None = None, queue: bool = True, golden_file: Path = DEFAULT_FILE
) -> VerifyRun:
    """Create a run with one item per active golden question and queue them as a Celery group on commit.

    Raises `RunNotQueued` (the run is stored as failed) when the task queue cannot be reached.
    """
    golden_sync(golden_file)
    with transaction.atomic():
        golden = list(GoldenQuestion.objects.filter(active=True))
        run = VerifyRun.objects.create(
            label=label, mode=settings.VERIFIER_MODE, total=len(golden), started_by_id=user_id
        )
        items = VerifyRunItem.objects.bulk_create(VerifyRunItem(run=run, golden=g) for g in golden)
        if queue:
            ids = [item.pk for item in items]
            transaction.on_commit(lambda: _queue(run.pk, ids))
    return run


class RunNotQueued(UserFacingError):
    """The task queue could not take the run's questions; the run is marked failed."""


def _queue(run_id: int, item_ids: list[int]) -> None:
    from celery import group

    from verifier.tasks import verify_golden_item

    try:
        group(verify_golden_item.s(item_id) for item_id in item_ids).apply_async(retry=False)
    except Exception as error:
        logger.warning("could not queue Verify-all run %s", run_id, exc_info=True)
        VerifyRunItem.objects.filter(run_id=run_id, status=RunItemStatus.PENDING).update(
            status=RunItemStatus.ERROR, error=QUEUE_UNREACHABLE
        )
        VerifyRun.objects.filter(pk=run_id).update(status=RunStatus.ERROR, finished_at=timezone.now())
        raise RunNotQueued(QUEUE_UNREACHABLE) from error


def verify_run_item(*, item_id: int) -> None:
    """Ask one golden question, verify the answer in place, and finish the run when it was the last item."""
    item = VerifyRunItem.objects.select_related("golden", "run").filter(pk=item_id).first()
    if item is None or item.status != RunItemStatus.PENDING:
        return
    began = time.perf_counter()
    try:
        answer = question_ask(text=item.golden.question)
        verification = verification_create(answer=answer)
        if verification is not None:
            verification_run(verification_id=verification.pk)
    except Exception as error:
        VerifyRunItem.objects.filter(pk=item_id).update(
            status=RunItemStatus.ERROR,
            error=str(error)[:2000],
            answers_question=_answers_question(item.golden, None),
        )
    else:
        VerifyRunItem.objects.filter(pk=item_id).update(
            status=RunItemStatus.DONE,
            answer=answer,
            seconds=time.perf_counter() - began,
            answers_question=_answers_question(item.golden, answer),
        )
    verify_run_finish(run_id=item.run_id)


def _answers_question(golden: GoldenQuestion, answer: Answer | None) -> bool | None:
    """Whether `answer` states the golden question's expected fact (an item that failed answered nothing);
    None when there is nothing to compare with, or when the check itself failed: the run must still finish."""
    try:
        return answer_check(
            answer=answer.text if answer else "",
            expected=golden.reference_answer,
            question=golden.question,
            in_scope=golden.category != OUT_OF_SCOPE,
            refused=bool(answer and answer.refused),
            outdated_fact=golden.outdated_fact,
        ).answers
    except Exception:
        logger.exception("could not check whether golden question %s was answered", golden.code)
        return None


def verify_run_finish(*, run_id: int) -> VerifyRun | None:
    """Compute and store the report once no item is pending; returns the run when it finished now.

    A report that cannot be computed marks the run failed (it would otherwise show as running for good), and
    the error is raised for the log.
    """
    try:
        with transaction.atomic():
            run = VerifyRun.objects.select_for_update().get(pk=run_id)
            if run.status != RunStatus.RUNNING or run.items.filter(status=RunItemStatus.PENDING).exists():
                return None
            run.report = run_report(run)
            run.status = RunStatus.DONE
            run.finished_at = timezone.now()
            run.save(update_fields=["report", "status", "finished_at"])
            return run
    except Exception:
        logger.exception("Verify-all run %s: the report could not be computed", run_id)
        VerifyRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
            status=RunStatus.ERROR, finished_at=timezone.now()
        )
        raise


def run_progress(run: VerifyRun) -> tuple[int, int]:
    """(finished items, total items)."""
    return run.items.exclude(status=RunItemStatus.PENDING).count(), run.total


def _rates(
    statuses: Counter[str], refused: int, questions: int, answered: int, checked: int
) -> dict[str, Any]:
    """The figures of a set of questions; `answered` of the `checked` questions (those with an expected fact)
    state it."""
    claims = sum(statuses.values())

    def rate(count: int, total: int) -> float | None:
        return round(count / total, 4) if total else None

    return {
        "questions": questions,
        "claims": claims,
        "verified_claim_rate": rate(statuses[ClaimStatus.VERIFIED], claims),
        "answered_rate": rate(answered, checked),
        "unverified_claim_rate": rate(statuses[ClaimStatus.UNVERIFIED], claims),
        "contradicted_claim_rate": rate(statuses[ClaimStatus.CONTRADICTED], claims),
        "refusal_rate": rate(refused, questions),
        "status_counts": {status.value: statuses[status.value] for status in ClaimStatus},
    }


def run_report(run: VerifyRun) -> dict[str, Any]:
    """The figures of a run: claim rates (unverified is the headline), the share of answers that state the
    expected fact, refusals, per category, every unverified claim."""
    items = list(run.items.select_related("golden", "answer__question__retrieval"))
    answer_ids = [item.answer_id for item in items if item.answer_id]
    claims = list(
        Claim.objects.filter(verification__answer_id__in=answer_ids, is_claim=True).select_related(
            "verification"
        )
    )
    by_answer: dict[int, list[Claim]] = defaultdict(list)
    for claim in claims:
        by_answer[claim.verification.answer_id].append(claim)
    overall: Counter[str] = Counter()
    per_category: dict[str, Counter[str]] = defaultdict(Counter)
    refused_by_category: Counter[str] = Counter()
    questions_by_category: Counter[str] = Counter()
    answered_by_category: Counter[str] = Counter()
    checked_by_category: Counter[str] = Counter()
    unverified = []
    for item in items:
        category = item.golden.category
        questions_by_category[category] += 1
        if item.answers_question is not None:
            checked_by_category[category] += 1
            answered_by_category[category] += item.answers_question
        answer = item.answer
        if answer is None:
            continue
        refused_by_category[category] += answer.refused
        for claim in by_answer.get(answer.pk, []):
            overall[claim.status] += 1
            per_category[category][claim.status] += 1
            if claim.status == ClaimStatus.UNVERIFIED:
                unverified.append(
                    {
                        "code": item.golden.code,
                        "category": category,
                        "question": item.golden.question,
                        "answer_id": answer.pk,
                        "answer_url": answer.get_absolute_url(),
                        "answer": answer.text,
                        "claim": claim.text,
                        "flags": list(claim.flags),
                    }
                )
    out_of_scope = questions_by_category[OUT_OF_SCOPE]
    in_scope = len(items) - out_of_scope
    in_scope_refused = sum(refused_by_category.values()) - refused_by_category[OUT_OF_SCOPE]
    report = _rates(
        overall,
        sum(refused_by_category.values()),
        len(items),
        sum(answered_by_category.values()),
        sum(checked_by_category.values()),
    )
    report.update(
        {
            "out_of_scope_refused": round(refused_by_category[OUT_OF_SCOPE] / out_of_scope, 4)
            if out_of_scope
            else None,
            "in_scope_refused": round(in_scope_refused / in_scope, 4) if in_scope else None,
            "in_scope_answered": round(1 - in_scope_refused / in_scope, 4) if in_scope else None,
            "refusal_gate": _refusal_gate(),
            "errors": sum(item.status == RunItemStatus.ERROR for item in items),
            "seconds": round((timezone.now() - run.started_at).total_seconds(), 1),
            "per_category": {
                category: _rates(
                    per_category[category],
                    refused_by_category[category],
                    count,
                    answered_by_category[category],
                    checked_by_category[category],
                )
                for category, count in sorted(questions_by_category.items())
            },
            "unverified_claims": unverified,
        }
    )
    return report


def _refusal_gate() -> dict[str, Any]:
    """The thresholds the gate used and what they were fitted to, with the garden's size: a refusal rate means
    little without them (one garden's rates move as it grows)."""
    thresholds, calibration = Thresholds.in_force(), calibration_in_force()
    return {
        "vector_threshold": thresholds.vector,
        "text_threshold": thresholds.text,
        "calibrated_at": calibration.created_at.isoformat() if calibration else None,
        "notes": Article.objects.live().count(),
    }


def runs_compare(first: VerifyRun, second: VerifyRun) -> list[dict[str, Any]]:
    """Each headline figure of two runs side by side, with the change from the first to the second."""
    rows = []
    for key, label in FIGURES:
        a, b = first.report.get(key), second.report.get(key)
        change = round(b - a, 4) if isinstance(a, int | float) and isinstance(b, int | float) else None
        rows.append({"figure": key, "label": label, "first": a, "second": b, "change": change})
    return rows


CSV_FIELDS = [
    "code",
    "category",
    "question",
    "status",
    "refused",
    "answers_question",
    "verdict",
    "risk_label",
    "claims",
    "verified",
    "unverified",
    "contradicted",
    "answer",
]


def report_shown(run: VerifyRun) -> dict[str, Any]:
    """The run's stored report as it may be shown today: an answer whose sources have since been withheld
    (made private) shows none of its text."""
    report = dict(run.report or {})
    listed = report.get("unverified_claims") or []
    ids = {entry.get("answer_id") for entry in listed}
    readable = set(Answer.objects.readable().filter(pk__in=ids).values_list("pk", flat=True))
    report["unverified_claims"] = [
        entry
        if entry.get("answer_id") in readable
        else {**entry, "answer": ANSWER_WITHHELD, "claim": ANSWER_WITHHELD}
        for entry in listed
    ]
    return report


def run_rows(run: VerifyRun) -> Iterable[dict[str, Any]]:
    """One row per golden question of the run, for CSV and JSON export."""
    items = run.items.select_related("golden", "answer")
    answer_ids = [i.answer_id for i in items if i.answer_id]
    readable = set(Answer.objects.readable().filter(pk__in=answer_ids).values_list("pk", flat=True))
    verifications = {
        v.answer_id: v
        for v in Verification.objects.filter(answer_id__in=[i.answer_id for i in items if i.answer_id])
    }
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
            "status": item.status,
            "refused": bool(answer and answer.refused),
            "answers_question": item.answers_question,
            "verdict": verification.verdict if verification else "",
            "risk_label": verification.risk_label if verification else "",
            "claims": sum(tally.values()),
            "verified": tally[ClaimStatus.VERIFIED],
            "unverified": tally[ClaimStatus.UNVERIFIED],
            "contradicted": tally[ClaimStatus.CONTRADICTED],
            "answer": (answer.text if answer.pk in readable else ANSWER_WITHHELD) if answer else item.error,
        }


def run_csv(run: VerifyRun) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS)
    writer.writeheader()
    writer.writerows(run_rows(run))
    return buffer.getvalue()
