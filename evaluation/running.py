"""A Verify-all run at work: the task body for one golden question, and the run's end once none is pending."""

from __future__ import annotations

import logging
import time

from django.db import transaction
from django.utils import timezone

from claimcheck.answer_scoring import score_answer
from evaluation.audiences import asked_as, beyond_audience, reader_as
from evaluation.models import GoldenQuestion, RunItemStatus, RunStatus, VerifyRun, VerifyRunItem
from evaluation.report import run_report
from garden.answering.asking import question_ask
from garden.golden import OUT_OF_SCOPE, UNANSWERABLE
from garden.models import Answer
from verifier.queueing import verification_create
from verifier.verifying import verification_run

logger = logging.getLogger(__name__)

RUN_FAILED = "This run failed before its report was made; the server log says why. Start a new run."


def verify_run_item(*, item_id: int) -> None:
    """Ask one golden question, verify the answer in place, and finish the run when it was the last item."""
    item = VerifyRunItem.objects.select_related("golden", "run").filter(pk=item_id).first()
    if item is None or item.status != RunItemStatus.PENDING:
        return
    began = time.perf_counter()
    audience = asked_as(item.run.audience, item.golden.audience)
    reader = reader_as(audience)
    beyond = beyond_audience(item.golden.expected_articles, reader)
    try:
        answer = question_ask(text=item.golden.question, reader=reader)
        verification = verification_create(answer=answer)
        if verification is not None:
            verification_run(verification_id=verification.pk)
    except Exception as error:
        VerifyRunItem.objects.filter(pk=item_id).update(
            status=RunItemStatus.ERROR,
            error=str(error)[:2000],
            asked_as=audience,
            beyond_audience=beyond,
            answers_question=_answers_question(item.golden, None, beyond=beyond),
        )
    else:
        VerifyRunItem.objects.filter(pk=item_id).update(
            status=RunItemStatus.DONE,
            answer=answer,
            seconds=time.perf_counter() - began,
            asked_as=audience,
            beyond_audience=beyond,
            answers_question=_answers_question(item.golden, answer, beyond=beyond),
        )
    verify_run_finish(run_id=item.run_id)


def _answers_question(golden: GoldenQuestion, answer: Answer | None, *, beyond: bool = False) -> bool | None:
    """Whether `answer` states the golden question's expected fact (an item that failed answered nothing);
    None when there is nothing to compare with, or when the check itself failed: the run must still finish.
    A question another audience could answer (`beyond`) is checked as one out of scope: it must be refused. An
    unanswerable one (its notes do not say) must be abstained on, or refused."""
    unanswerable = golden.category == UNANSWERABLE
    try:
        return score_answer(
            answer=answer.text if answer else "",
            expected=golden.reference_answer,
            question=golden.question,
            in_scope=golden.category != OUT_OF_SCOPE and not beyond and not unanswerable,
            refused=bool(answer and (answer.refused or (unanswerable and answer.abstained))),
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
            run.report = run_report(run).as_dict()
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
