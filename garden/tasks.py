"""Celery tasks of the garden: thin shells around `garden.sync`."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from garden.answering.self_calibration import garden_self_calibrate
from garden.sync import fanout, garden_sync_configured


@shared_task(ignore_result=True)
def sync_garden() -> int:
    """Periodic (Celery beat, when GARDEN_PATH is set): sync the garden; returns the notes that changed."""
    report = garden_sync_configured()
    return 0 if report is None else report.created + report.revised + report.moved + report.retired


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def embed_texts(self: Task[Any, Any], texts: list[str], backend: str) -> dict[str, Any]:
    """Embed one batch of an import's passages (`import_garden --workers`) by the importer's embedding backend,
    reporting progress as it goes; the vectors come back packed. Pure, so safe to run twice: the importing
    process writes them, once."""

    def report(done: int) -> None:
        self.update_state(state=fanout.PROGRESS, meta={"embedded": done})

    return fanout.batch_embed(texts, backend, on_batch=report)


@shared_task(ignore_result=True, soft_time_limit=1800, time_limit=1900)
def self_calibrate() -> int | None:
    """Queued at the end of an import that changed much of the garden: fit the refusal gate to probes of it;
    returns the calibration's id (None when there was nothing to probe)."""
    calibration = garden_self_calibrate()
    return None if calibration is None else calibration.pk
