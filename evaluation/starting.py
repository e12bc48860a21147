"""Starting a Verify-all run: one item per active golden question, queued as a Celery group."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evaluation.audiences import audience_check
from evaluation.golden import golden_sync
from evaluation.models import GoldenQuestion, RunItemStatus, RunStatus, VerifyRun, VerifyRunItem
from garden.errors import UserFacingError
from garden.golden import DEFAULT_FILE

logger = logging.getLogger(__name__)

QUEUE_UNREACHABLE = "The task queue (Redis) could not be reached, so no question was run. Start the run again once it is back."


class RunNotQueued(UserFacingError):
    """The task queue could not take the run's questions; the run is marked failed."""


def verify_run_start(
    *,
    label: str,
    user_id: int | None = None,
    queue: bool = True,
    golden_file: Path = DEFAULT_FILE,
    audience: str = "",
) -> VerifyRun:
    """Create a run asked as `audience` (empty: the default one; `evaluation.audiences`) with one item per
    active golden question, and queue them as a Celery group on commit.

    Raises `UnknownAudience` (no run is stored) for an audience the garden does not have, and `RunNotQueued`
    (the run is stored as failed) when the task queue cannot be reached.
    """
    audience = audience_check(audience)
    golden_sync(golden_file)
    with transaction.atomic():
        golden = list(GoldenQuestion.objects.filter(active=True))
        run = VerifyRun.objects.create(
            label=label,
            mode=settings.VERIFIER_MODE,
            audience=audience,
            total=len(golden),
            started_by_id=user_id,
        )
        items = VerifyRunItem.objects.bulk_create(VerifyRunItem(run=run, golden=g) for g in golden)
        if queue:
            ids = [item.pk for item in items]
            transaction.on_commit(lambda: _queue(run.pk, ids))
    return run


def _queue(run_id: int, item_ids: list[int]) -> None:
    from celery import group

    from evaluation.tasks import verify_golden_item

    try:
        group(verify_golden_item.s(item_id) for item_id in item_ids).apply_async(retry=False)
    except Exception as error:
        logger.warning("could not queue Verify-all run %s", run_id, exc_info=True)
        VerifyRunItem.objects.filter(run_id=run_id, status=RunItemStatus.PENDING).update(
            status=RunItemStatus.ERROR, error=QUEUE_UNREACHABLE
        )
        VerifyRun.objects.filter(pk=run_id).update(status=RunStatus.ERROR, finished_at=timezone.now())
        raise RunNotQueued(QUEUE_UNREACHABLE) from error
