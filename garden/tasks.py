"""Celery tasks of the garden: thin shells around `garden.sync`."""

from __future__ import annotations

from celery import shared_task

from garden.sync import garden_sync_configured


@shared_task(ignore_result=True)
def sync_garden() -> int:
    """Periodic (Celery beat, when GARDEN_PATH is set): sync the garden; returns the notes that changed."""
    report = garden_sync_configured()
    return 0 if report is None else report.created + report.revised + report.moved + report.retired
