"""Retraining the local judge with editors' reviews, and rolling its parameter versions back (the active one
judges: `verifier.judge_parameters`).

Version 1 is the committed `params.json`. A retraining (`judge_retrain_start`, then `judge_retrain` in a worker)
refits on the benchmarks plus half of the editors' decisions and keeps the new version, made active, only if
`evaluation.calibration.editors`' two checks pass; otherwise it is stored as refused, its report saying why.
"""

from __future__ import annotations

import datetime
import logging
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from claimcheck.judges.local import PARAMS_PATH
from claimcheck.terms import ClaimStatus
from evaluation.calibration.editors import MIN_REVIEWS, TOO_FEW_REVIEWS, EditorReview, retrain
from garden.errors import UserFacingError
from verifier.models import (
    Decision,
    JudgeParameters,
    ParametersSource,
    ParametersStatus,
    Review,
)

logger = logging.getLogger(__name__)

# The statuses under which editors say a claim is supported by the passage it cites.
SUPPORTED_STATUSES = frozenset({ClaimStatus.VERIFIED, ClaimStatus.INFERRED})
ALREADY_RUNNING = "A retraining is already running; wait for its outcome."
NOT_ACTIVATABLE = "Only a kept version can be made active."
RETRAIN_FAILED = "The retraining failed: {error}"
NOT_QUEUED = "The retraining could not be queued (the task queue is unreachable); try again when it is back."
ABANDONED = "No worker finished this retraining within its time limit; it was abandoned."
# Longer than the judge_retrain task's hard time limit (960 s): a version running this long was lost.
ABANDONED_AFTER = datetime.timedelta(minutes=20)


class RetrainError(UserFacingError):
    """A retraining or rollback that cannot be done as asked."""


def editor_reviews() -> list[EditorReview]:
    """Every claim's latest 'judge right' / 'judge wrong' decision as training data: the claim against the
    passage it cites (claims without one are left out: there is nothing to align them with)."""
    latest: dict[int, Review] = {}
    decided = (
        Review.objects.exclude(decision=Decision.NOTE)
        .filter(claim__passage__isnull=False)
        .select_related("claim__passage")
        .order_by("claim_id", "-created_at", "-pk")
    )
    for review in decided:
        latest.setdefault(review.claim_id, review)
    out = []
    for claim_id, review in sorted(latest.items()):
        correct = review.correct_status if review.decision == Decision.JUDGE_WRONG else review.judged_status
        assert review.claim.passage is not None
        out.append(
            EditorReview(
                claim_id, review.claim.text, review.claim.passage.text, correct in SUPPORTED_STATUSES
            )
        )
    return out


def judge_retrain_start(*, user_id: int | None, queue: bool = True) -> JudgeParameters:
    """Create the next version as running and queue its retraining (refused at once when too few reviews);
    with `queue=False` the caller runs `judge_retrain` itself (`manage.py calibrate_judge`)."""
    count = len(editor_reviews())
    if count < MIN_REVIEWS:
        raise RetrainError(TOO_FEW_REVIEWS.format(count=count, minimum=MIN_REVIEWS))
    with transaction.atomic():
        running = JudgeParameters.objects.select_for_update().filter(status=ParametersStatus.RUNNING)
        # A retraining no worker finished within its time limit was lost with its worker: it blocks nothing.
        running.filter(created_at__lt=timezone.now() - ABANDONED_AFTER).update(
            status=ParametersStatus.ERROR, report={"reason": ABANDONED}
        )
        if running.exists():
            raise RetrainError(ALREADY_RUNNING)
        latest = JudgeParameters.objects.aggregate(latest=Max("version"))["latest"] or 0
        version = JudgeParameters.objects.create(
            version=latest + 1, source=ParametersSource.RETRAINED, created_by_id=user_id
        )
        if queue:
            transaction.on_commit(lambda: _enqueue(version))
    return version


def _enqueue(version: JudgeParameters) -> None:
    from evaluation import tasks

    try:
        tasks.judge_retrain.apply_async((version.pk,), retry=False)
    except Exception:
        # The broker is away: the version says so at once rather than look as if it were running.
        logger.warning("could not queue retraining v%s", version.version, exc_info=True)
        JudgeParameters.objects.filter(pk=version.pk).update(
            status=ParametersStatus.ERROR, report={"reason": NOT_QUEUED}
        )


def judge_retrain(
    *, parameters_id: int, eval_dir: Path | None = None, cache_dir: Path | None = None
) -> JudgeParameters | None:
    """Run a retraining created by `judge_retrain_start`: kept (and active) or refused, or failed with the
    reason in its report. None when the version is gone or already finished (a re-delivered task)."""
    version = JudgeParameters.objects.filter(pk=parameters_id, status=ParametersStatus.RUNNING).first()
    if version is None:
        return None
    current = JudgeParameters.objects.filter(active=True).first()
    current_params = current.params if current and current.source != ParametersSource.SHIPPED else _shipped()
    try:
        outcome = retrain(
            editor_reviews(),
            current_params,
            eval_dir or Path(settings.JUDGE_EVAL_DIR),
            cache_dir or Path(settings.JUDGE_CALIBRATION_CACHE),
        )
    except Exception as error:
        logger.exception("retraining the judge (version %s) failed", version.version)
        version.status = ParametersStatus.ERROR
        version.report = {"reason": RETRAIN_FAILED.format(error=error)}
        version.save(update_fields=["status", "report"])
        return version
    version.params, version.report = outcome.params, outcome.report
    version.report["replaces"] = current.version if current else None
    version.status = ParametersStatus.KEPT if outcome.kept else ParametersStatus.REFUSED
    with transaction.atomic():
        version.save(update_fields=["params", "report", "status"])
        if outcome.kept:
            _activate(version)
    logger.info("judge parameters v%s %s: %s", version.version, version.status, version.report["reason"])
    return version


def judge_parameters_activate(*, version: int) -> JudgeParameters:
    """Make a kept version the active one (a rollback, or back again)."""
    with transaction.atomic():
        chosen = JudgeParameters.objects.select_for_update().filter(version=version).first()
        if chosen is None or chosen.status != ParametersStatus.KEPT:
            raise RetrainError(NOT_ACTIVATABLE)
        _activate(chosen)
    return chosen


def _activate(version: JudgeParameters) -> None:
    JudgeParameters.objects.filter(active=True).exclude(pk=version.pk).update(active=False)
    JudgeParameters.objects.filter(pk=version.pk).update(active=True)
    version.active = True


def _shipped() -> dict[str, object]:
    import json

    document: dict[str, object] = json.loads(PARAMS_PATH.read_text())
    return document
