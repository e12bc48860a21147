"""Keeping a garden in sync: `import_garden --watch`, and the scheduled sync of GARDEN_PATH."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from django.conf import settings
from django.db import connection

from garden.formats.registry import is_note
from garden.sync.git import git_garden_import
from garden.sync.importing import garden_import
from garden.sync.report import ImportReport

logger = logging.getLogger(__name__)


def _garden_file(change: object, path: str) -> bool:
    return is_note(path) or path.lower().endswith((".gardenignore", "_garden.yaml"))


SYNC_FAILED = "the garden could not be synced; the watch goes on"


def garden_watch(
    folders: Sequence[Path],
    on_report: Callable[[ImportReport], None],
    *,
    stop: threading.Event | None = None,
) -> None:
    """Sync the folders each time their notes change (batched while an editor saves), until `stop` is set
    or the process is interrupted. A sync that fails, however it fails, is logged and the watch goes on: the
    next change syncs again."""
    import watchfiles

    try:
        for _changes in watchfiles.watch(
            *folders,
            watch_filter=_garden_file,
            stop_event=stop,
            debounce=800,
            ignore_permission_denied=True,  # a folder no one may read is reported by the sync, not fatal here
        ):
            try:
                on_report(garden_import(folders))
            except Exception:  # a bug or an outage in one sync must not end the watch
                logger.exception(SYNC_FAILED)
                connection.close_if_unusable_or_obsolete()  # a broken one is replaced at the next sync
    finally:
        connection.close()  # the watch may run in a thread of its own, whose connection nobody else closes


SYNC_LOCK = 7402  # advisory lock: one scheduled sync at a time, whichever worker beat sent it to


def garden_sync_configured() -> ImportReport | None:
    """Sync the garden at GARDEN_PATH, or the git garden of GARDEN_GIT_URL (Celery beat's schedule); None when
    none is set or a sync is running."""
    if not settings.GARDEN_PATH and not settings.GARDEN_GIT_URL:
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [SYNC_LOCK])
        if not cursor.fetchone()[0]:
            logger.info("a garden sync is already running; this one steps aside")
            return None
        try:
            if settings.GARDEN_GIT_URL:
                report = git_garden_import(settings.GARDEN_GIT_URL, settings.GARDEN_GIT_BRANCH)
            else:
                report = garden_import([Path(settings.GARDEN_PATH)])
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [SYNC_LOCK])
    for folder, message in report.refused:
        logger.warning("garden sync of %s refused: %s", folder, message)
    for path, reason in report.failures:
        logger.warning("garden note not imported: %s: %s", path, reason)
    logger.info(
        "garden synced: %d new, %d revised, %d unchanged, %d moved, %d retired, %d withheld, %d re-embedded, "
        "%d failed",
        report.created,
        report.revised,
        report.unchanged,
        report.moved,
        report.retired,
        report.withheld,
        report.reembedded,
        len(report.failures),
    )
    return report
