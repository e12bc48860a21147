"""Releasing the notes withheld for naming an audience there was none of, once there is one (`audiences add`).

A note for an audience the site does not know is withheld (`garden.sync.access.AUDIENCE_UNKNOWN`): it is never
imported, or its article, if it had one, shows nothing. Adding the audience releases such notes at once: the
gardens holding them are synced again, so the import itself decides by its one rule, from the files as they
are now. The stored text is never made current as it stands: the note may have been edited to name the
audience, and that edit's text is the one the audience's readers must get, under the audiences it names.
A note withheld for another reason too (another audience still unknown, unreadable, private) stays withheld.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from django.db import connection
from django.db.models import QuerySet

from garden.formats.registry import place_of
from garden.models import Article, Sync
from garden.sync.access import audiences_unknown
from garden.sync.importing import garden_import
from garden.sync.report import ImportReport
from garden.sync.watching import SYNC_LOCK

Place = tuple[str, str]  # a garden's folder (`Article.garden`) and a note's place in it (`Article.path`)


def _waiting_in_syncs(audience: str, roots: Iterable[str]) -> set[Place]:
    """The notes the latest sync of each garden could not import for naming `audience`, unknown then."""
    latest: dict[tuple[str, ...], Sync] = {}
    for sync in Sync.objects.only("folders", "failures"):  # newest first: a later sync's word is the last
        latest.setdefault(tuple(os.path.realpath(folder) for folder in sync.folders), sync)
    known_roots = [Path(root) for root in roots if root]
    waiting: set[Place] = set()
    for sync in latest.values():
        folders = [Path(os.path.abspath(folder)) for folder in sync.folders]
        for path, reason in sync.failures:
            if audience not in audiences_unknown(reason):
                continue
            written = Path(os.path.abspath(path))
            for folder in [*folders, *known_roots]:
                if folder.is_dir() and written.is_relative_to(folder):
                    waiting.add((str(folder.resolve()), place_of(written.relative_to(folder))))
                    break
    return waiting


def notes_waiting(audience: str) -> set[Place]:
    """Where the notes withheld for naming `audience` while there was none of it are: the articles withheld for
    it, and the notes never imported for it (as the latest syncs recorded them)."""
    waiting = {
        (garden, path)
        for garden, path, reason in Article.objects.filter(withheld_at__isnull=False)
        .exclude(garden="")
        .values_list("garden", "path", "withheld_reason")
        if audience in audiences_unknown(reason)
    }
    roots = Article.objects.exclude(garden="").values_list("garden", flat=True).distinct()
    return waiting | _waiting_in_syncs(audience, roots)


def _live(roots: list[str], waiting: set[Place]) -> QuerySet[Article]:
    """The articles of these places in the garden and shown to their audiences' readers, whoever they are."""
    return Article.objects.filter(
        withheld_at__isnull=True, retired_at__isnull=True, garden__in=roots, path__in={p for _, p in waiting}
    )


def notes_release(*, audience: str) -> tuple[list[Article], ImportReport | None]:
    """Sync again the gardens holding notes withheld for naming `audience` (to be called once it exists) and
    return the articles so released, by title, with the sync's report (None when no note was waiting for it)."""
    waiting = notes_waiting(audience)
    roots = sorted({garden for garden, _ in waiting if Path(garden).is_dir()})
    if not roots:
        return [], None
    before = set(_live(roots, waiting).values_list("pk", flat=True))
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [SYNC_LOCK])  # after a scheduled sync, never beside it
        try:
            report = garden_import([Path(root) for root in roots])
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [SYNC_LOCK])
    released = [
        article
        for article in _live(roots, waiting).exclude(pk__in=before)
        if (article.garden, article.path) in waiting
    ]
    return sorted(released, key=lambda article: article.title.lower()), report
