"""Celery tasks of evaluation: thin shells that load ids and call one service.

Each keeps the name it was registered under when it lived in `verifier.tasks`, so that a task queued before an
upgrade is still found by the workers after it.
"""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from evaluation import retraining, running


@shared_task(
    name="verifier.tasks.verify_golden_item",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    max_retries=6,
)
def verify_golden_item(item_id: int) -> None:
    """Run one golden question of a Verify-all run through the whole flow."""
    running.verify_run_item(item_id=item_id)


@shared_task(
    name="verifier.tasks.retrain_judge",
    acks_late=True,
    reject_on_worker_lost=True,
    # A refit on the benchmarks takes about a minute (five on a cold feature cache): above the global limits.
    soft_time_limit=900,
    time_limit=960,
)
def judge_retrain(parameters_id: int) -> str:
    """Retrain the local judge with editors' reviews. Safe to run twice: a finished version is left alone."""
    version = retraining.judge_retrain(parameters_id=parameters_id)
    return version.status if version is not None else "skipped"
