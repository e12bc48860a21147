"""Importing garden folders (`import_garden`), a folder at a time and a step at a time: check the folder, read its
notes (`garden.sync.reading`), keep the withheld ones withheld, follow moves, write what changed in groups
(`garden.sync.groups`), then retire what is gone; what the import did is its report (`garden.sync.report`)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from pathlib import Path

from django.conf import settings
from django.db import transaction

from garden.formats.note import ArticleFileError, ParsedArticle
from garden.formats.registry import GARDEN_SUFFIXES, GardenFormats, formats_opened
from garden.models import Article, Link
from garden.sync.access import NO_RULES, access_rules, audiences_write
from garden.sync.embedding import Progress, groups_embedded
from garden.sync.fanout import FanOutError, Workers, groups_embedded_on_workers
from garden.sync.groups import Embedder, changes_write
from garden.sync.lifecycle import (
    PRIVATE,
    articles_adopt,
    articles_in_garden,
    articles_made_private,
    articles_missing_count,
    articles_move,
    articles_restore,
    articles_retire,
    articles_unread,
    articles_withhold,
    gardens_synced,
)
from garden.sync.linking import link_resolver, red_links_resolve
from garden.sync.naming import notes_clear_of_withheld
from garden.sync.reading import imported_title, note_place, notes_read, unread_slug
from garden.sync.reembedding import passages_reembed
from garden.sync.report import ImportReport, sync_record
from garden.sync.vector_column import vector_column_problem
from garden.sync.writing import (
    notes_changed,
    vocabulary_apply,
)
from garden.vocabulary import read_vocabulary
from garden.walk import GardenWalk, garden_walk, shown
from providers.embeddings import EmbeddingError

logger = logging.getLogger(__name__)


GARDEN_FILES = GARDEN_SUFFIXES  # what a garden's walk reads: the files of every format
IMPORT_STOPPED = "{reason} {stored} note(s) were stored before it stopped; run the import again to resume."
# An accident (an unmounted disk, a wrong path) must not retire a garden: these syncs change nothing.
ON_PURPOSE = "If the notes really are gone, run the import with --allow-mass-retire."
GARDEN_MISSING = (
    "{folder} is not there (or not a folder), so the garden's {count} article(s) were left as they are. "
)
GARDEN_UNREADABLE = (
    "{folder} cannot be read ({reason}), so the garden's {count} article(s) were left as they are. "
)
GARDEN_EMPTY = (
    "{folder} holds no notes (an unmounted disk?), so the garden's {count} article(s) were left as they are. "
)
ADDRESS_WITHHELD = (
    "asks for the address {asked}, which is a withheld note's: it is imported as {slug} (a note never takes over "
    "a withheld note's page, history or answers)"
)
NO_GARDEN = "cannot be read as a garden: {reason}"
MASS_RETIRE = (
    "This sync would retire {missing} of the garden's {count} articles at once, more than half, so nothing "
    "was changed. "
)


class ImportStopped(Exception):
    """The workers, or a served embedding model, could not finish an import's embedding. The groups written before stay written, and
    `report` says what they were; the next import resumes from the notes not yet stored."""

    def __init__(self, reason: str, report: ImportReport) -> None:
        super().__init__(IMPORT_STOPPED.format(reason=reason, stored=report.created + report.revised))
        self.report = report


def _folder_problem(folder: Path) -> tuple[str, str] | None:
    """Why a garden folder cannot be synced at all (message template, reason), or None."""
    if not folder.is_dir():
        return GARDEN_MISSING, ""
    try:
        with os.scandir(folder) as entries:
            next(entries, None)
    except OSError as error:
        return GARDEN_UNREADABLE, error.strerror or str(error)
    return None


def _folder_import(
    folder: Path,
    report: ImportReport,
    embedder: Embedder,
    on_start: Callable[[int], None] | None,
    on_progress: Progress | None,
    allow_mass_retire: bool,
    history: bool,
    renamed: Mapping[str, str],
) -> None:
    """Sync one folder (or one note), step by step: check the folder, read its notes, keep the withheld ones
    withheld, bring the garden up to date, write the changed notes in groups, then retire what is gone."""
    root = folder.resolve()
    walk = garden_walk(folder, GARDEN_FILES) if folder.is_dir() else None
    if not _folder_usable(folder, root, walk, report, allow_mass_retire=allow_mass_retire):
        return
    if walk is not None:
        _walk_report(walk, report)
    passage_counts: dict[str, int] = {}
    # A Logseq graph's config.edn, an Org garden's ids: read once a sync, the latter from the garden's walk.
    formats = formats_opened(folder, imported_title, lambda suffixes: garden_walk(folder, suffixes).files)
    notes, withheld, roots = _notes_sorted(folder, root, walk, formats, report, passage_counts)
    del walk  # read: a path each is no longer needed while the notes are written
    if roots is not None and _retires_too_many(
        folder, root, roots, notes, withheld, report, allow_mass_retire=allow_mass_retire
    ):
        return
    _garden_prepare(folder, root, roots, notes, withheld, report, renamed)
    resolver = link_resolver(list(notes.values()))
    changed = notes_changed(list(notes.values()), history=history)
    report.unchanged += len(notes) - len(changed)
    articles_restore(sorted(set(notes) - {p.slug for p in changed}))
    present = set(notes) | set(withheld)
    del notes  # the unchanged notes are done with: only the changed ones are held while they are written
    changes_write(changed, folder, formats, resolver, passage_counts, report, embedder, on_start, on_progress)
    red_links_resolve(resolver)
    if roots is not None:
        report.retired += articles_retire(root, present=present, roots=roots)
        articles_adopt(root, present)


def _folder_usable(
    folder: Path, root: Path, walk: GardenWalk | None, report: ImportReport, *, allow_mass_retire: bool
) -> bool:
    """Whether the import of `folder` goes on. A single note always does; a garden folder that is missing,
    unreadable or empty does not: refused while its garden has articles (unless `allow_mass_retire`, which
    retires a missing folder's), failed when it never had any. Says why in `report`."""
    if folder.is_file():
        return True
    problem = _folder_problem(folder)
    if problem is None and walk is not None and not (walk.files or walk.private or walk.skipped):
        problem = GARDEN_EMPTY, ""
    if problem is None:
        return True
    template, reason = problem
    count = articles_in_garden(root).count()
    if count and not allow_mass_retire:
        message = template.format(folder=folder, count=count, reason=reason) + ON_PURPOSE
        report.refused.append((str(folder), message))
        return False
    if template is not GARDEN_EMPTY and not count:
        report.failures.append((str(folder), NO_GARDEN.format(reason=reason or "no such file or folder")))
        return False
    if walk is None:
        report.retired += articles_retire(root, present=set())
        return False
    return True


def _walk_report(walk: GardenWalk, report: ImportReport) -> None:
    """Count what the walk of a garden left unread: its private places, and the files it skipped on purpose
    (by kind) or could not read (as failures)."""
    report.private_places += len(walk.private)
    for path, reason in walk.skipped:
        kind = walk.kinds.get(path)
        if kind is None:
            report.failures.append((shown(path), reason))
        else:
            report.skipped.append((shown(path), kind, reason))


def _notes_sorted(
    folder: Path,
    root: Path,
    walk: GardenWalk | None,
    formats: GardenFormats,
    report: ImportReport,
    passage_counts: dict[str, int],
) -> tuple[dict[str, ParsedArticle], dict[str, str], set[str] | None]:
    """The notes to import, by slug; the articles to withhold (slug -> why): those of notes present but
    private or unreadable, and in a garden those whose notes turned private by their place; and, for a garden,
    the gardens this sync stands for (`gardens_synced`). A note asking for a withheld note's address is given
    another, with a notice."""
    files = walk.files if walk is not None else [folder]
    access = access_rules(root) if folder.is_dir() else NO_RULES
    notes, unread = notes_read(files, folder, root, formats, report, passage_counts, access)
    if walk is not None:
        unread |= {
            note_place(path, folder): (unread_slug(path, folder, formats), PRIVATE) for path in walk.private
        }
    withheld = articles_unread(root, unread, public=notes)
    roots = None
    if walk is not None:
        roots = gardens_synced(root, notes)
        withheld |= articles_made_private(root, roots, set(notes) | set(withheld), walk.private)
    notes, moved = notes_clear_of_withheld(notes, withheld)
    report.notices += [
        (note.path, ADDRESS_WITHHELD.format(asked=asked, slug=note.slug)) for note, asked in moved
    ]
    return notes, withheld, roots


def _retires_too_many(
    folder: Path,
    root: Path,
    roots: set[str],
    notes: Mapping[str, ParsedArticle],
    withheld: Mapping[str, str],
    report: ImportReport,
    *,
    allow_mass_retire: bool,
) -> bool:
    """Whether this sync would retire more than half of its garden's articles at once, and so changes nothing
    (unless `allow_mass_retire`): an accident, as a wrong path, must not retire a garden. Says why in `report`."""
    kept = set(notes) | set(withheld)
    missing = articles_missing_count(root, roots, kept, arrivals={p.content_hash for p in notes.values()})
    count = articles_in_garden(root, roots).count()
    if missing * 2 > count and not allow_mass_retire:
        message = MASS_RETIRE.format(missing=missing, count=count) + ON_PURPOSE
        report.refused.append((str(folder), message))
        return True
    return False


def _garden_prepare(
    folder: Path,
    root: Path,
    roots: set[str] | None,
    notes: dict[str, ParsedArticle],
    withheld: Mapping[str, str],
    report: ImportReport,
    renamed: Mapping[str, str],
) -> None:
    """Bring the garden up to date before any note is written: its own topics and themes (`_garden.yaml`), the
    articles withheld, the audiences its notes are for, and, in a garden, the notes moved or renamed."""
    try:
        vocabulary_apply(read_vocabulary(folder))
    except ArticleFileError as error:
        report.failures.append((str(folder), str(error)))
    report.withheld += articles_withhold(withheld)
    audiences_write(notes)
    if roots is not None:
        report.moved += articles_move(root, notes, roots, renamed)


def garden_import(
    folders: Sequence[Path],
    *,
    on_start: Callable[[int], None] | None = None,
    on_progress: Progress | None = None,
    workers: Workers | None = None,
    batch_timeout: float | None = None,
    allow_mass_retire: bool = False,
    history: Collection[Path] = (),
    renamed: Mapping[str, str] | None = None,
) -> ImportReport:
    """Sync folders of Markdown notes and PDFs (or single ones) in order: new notes become articles, edited ones
    new revisions (re-embedding only the passages that changed), moved or renamed ones keep their article, and
    notes gone from a folder are retired. The folder is the truth: a note whose text is its article's current
    text is skipped, and one whose text went back to an earlier one gets a new revision with that text, so what
    readers see, what is retrieved and what the judges read is what the file says now (a new revision rather
    than the old one made current again: history stays in the order it happened, each revision's dates stay
    true, and the one writer of revisions has no second path). Folders in `history` are older copies of the
    garden, imported on purpose (the sample's `earlier/`): their texts imported before are left as they are
    (`notes_changed`). Files left
    out on purpose (private, links the garden does not follow, scanned PDFs...) are counted in
    `report.skipped` by kind, apart from `report.failures`: notes that should have been imported and were not. Last, the
    current passages another embedder made (EMBEDDING_BACKEND was switched) are embedded again, here.

    A file that cannot be imported is reported with its reason and the rest still import; its article, if it
    has one, is withheld from readers until the file is fixed, as is one whose note turned private. A folder
    that is missing, unreadable or empty while its garden has articles, or a sync that would retire more than
    half of them, changes nothing and says why in `report.refused` (unless `allow_mass_retire`). Notes are written
    a group at a time, each group in one transaction (each note in its own, should the group's fail), so an
    interrupted import never leaves a half-written article. When the vector column is of another size than the
    configured embedder's vectors (a served model of another size, before `reembed_garden`), nothing is
    imported and `report.refused` says so.

    With `workers` (see `garden.sync.fanout.workers_find`), the Celery workers encode the groups and this
    process writes them; ImportStopped when they cannot finish (a batch failed, or did not come back within
    `batch_timeout` seconds), after the groups already written, as when a served embedding model fails
    (`EmbeddingError`: down, 429 or 5xx after its retries, a reply that is not vectors of the configured size).

    `renamed` (a note's place -> the place it was renamed from, as git's rename detection tells it: see
    `garden.sync.git`) follows renamed notes whose text changed too; a folder's are followed by their text.
    """
    report = ImportReport()
    began = time.perf_counter()
    problem = vector_column_problem()
    if problem is not None:
        report.refused.extend((str(folder), problem) for folder in folders)
        report.seconds = time.perf_counter() - began
        report.sync_id = sync_record(folders, report).pk
        return report
    before = Article.objects.filter(retired_at__isnull=True).count()
    embedder: Embedder = groups_embedded
    if workers is not None:
        embedder = partial(groups_embedded_on_workers, workers=workers, batch_timeout=batch_timeout)
    try:
        for folder in folders:
            _folder_import(
                folder,
                report,
                embedder,
                on_start,
                on_progress,
                allow_mass_retire,
                history=folder in history,
                renamed=renamed or {},
            )
        report.reembedded, seconds = passages_reembed(on_start, on_progress)
    except (FanOutError, EmbeddingError) as error:
        report.seconds = time.perf_counter() - began
        report.sync_id = sync_record(folders, report).pk
        raise ImportStopped(str(error), report) from error
    report.embed_seconds += seconds
    report.red_links = Link.objects.filter(target__isnull=True, source__retired_at__isnull=True).count()
    report.seconds = time.perf_counter() - began
    report.sync_id = sync_record(folders, report).pk
    if import_changed_much(report.created + report.revised + report.moved + report.retired, before):
        self_calibration_queue()
    return report


def import_changed_much(changed: int, before: int) -> bool:
    """Whether an import that changed `changed` notes of a garden of `before` live ones calls for probing the
    gate again: the first import of a garden, or one that changed at least RETRIEVAL_PROBES_AFTER_SHARE of it."""
    if not settings.RETRIEVAL_PROBES_AFTER_IMPORT or changed == 0:
        return False
    return before == 0 or changed >= settings.RETRIEVAL_PROBES_AFTER_SHARE * before


def self_calibration_queue() -> None:
    """Queue the self-calibration task once the import's writes are committed; a broker that is away only
    costs this calibration (the gate keeps the one in force), never the import."""

    def enqueue() -> None:
        from garden import tasks

        try:
            tasks.self_calibrate.apply_async(retry=False)
        except Exception:
            logger.warning("could not queue the refusal gate's self-calibration", exc_info=True)

    transaction.on_commit(enqueue)
