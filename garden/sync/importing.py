"""Importing garden folders (`import_garden`): read the notes, follow moves, embed and write what changed, in
groups, the next group's encoding (in this process, or on the Celery workers) overlapping this group's writes,
then retire what is gone."""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings
from django.db import DatabaseError, reset_queries, transaction

from garden.formats.note import ArticleFileError, ParsedArticle
from garden.formats.protocol import NoteLeftOut
from garden.formats.registry import GARDEN_SUFFIXES, GardenFormats, formats_opened, place_of
from garden.models import Article, ArticleRevision, Link, Sync
from garden.passages import passage_spans
from garden.skips import SkipKind, skipped_words
from garden.sync.access import NO_RULES, AccessRules, access_rules, audiences_placed, audiences_write
from garden.sync.embedding import Embedded, Progress, groups_embedded
from garden.sync.fanout import FanOutError, Workers, groups_embedded_on_workers
from garden.sync.images import ImageFinder
from garden.sync.indexing import vector_index_deferred
from garden.sync.lifecycle import (
    PRIVATE,
    UNREADABLE,
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
from garden.sync.linking import link_resolver, links_resolve, red_links_resolve
from garden.sync.naming import unique_slugs, withheld_addresses_kept
from garden.sync.reembedding import passages_reembed
from garden.sync.topic_names import names_place, topics_of, topics_rederive
from garden.sync.vector_column import vector_column_problem
from garden.sync.writing import (
    DerivedVocabulary,
    Known,
    Pending,
    notes_changed,
    notes_write,
    vocabulary_apply,
)
from garden.vocabulary import has_vocabulary_file, read_vocabulary, vocabulary_derived
from garden.walk import garden_walk, shown
from providers.embeddings import EmbeddingError

logger = logging.getLogger(__name__)


@dataclass
class ImportReport:
    created: int = 0
    revised: int = 0
    unchanged: int = 0
    passages: int = 0
    embed_seconds: float = 0.0  # spent encoding, summed over groups (on workers, over their processes)
    write_seconds: float = 0.0  # spent writing groups to the database
    seconds: float = 0.0
    embedded: int = 0  # passages embedded (an edit reuses the vectors of the passages it left alone)
    reembedded: int = 0  # current passages of unchanged notes embedded again: another embedder had made them
    moved: int = 0  # notes moved or renamed, which kept their article
    retired: int = 0  # notes gone from the garden
    private: int = 0  # notes left out by a marker (`private: true`, `publish: false`, `public:: false`)
    private_places: int = 0  # notes (and PDFs) in private places: never read
    # Files left out on purpose by a rule of the garden, other than private ones: (path, kind, reason).
    skipped: list[tuple[str, SkipKind, str]] = field(default_factory=list)
    withheld: int = 0  # articles newly withheld from readers: their note turned private or unreadable
    red_links: int = 0  # links, across the garden, to notes it does not have
    failures: list[tuple[str, str]] = field(default_factory=list)
    notices: list[tuple[str, str]] = field(
        default_factory=list
    )  # files read but not imported as such, and why
    refused: list[tuple[str, str]] = field(default_factory=list)  # folders left as they were, and why
    sync_id: int | None = None  # the `Sync` row that records it

    @property
    def passages_per_second(self) -> float:
        return self.passages / self.seconds if self.seconds else 0.0

    @property
    def skipped_kinds(self) -> Counter[SkipKind]:
        """How many files were left out on purpose, by kind, private ones included."""
        kinds = Counter(kind for _, kind, _ in self.skipped)
        kinds[SkipKind.PRIVATE] += self.private_places
        kinds[SkipKind.MARKED_PRIVATE] += self.private
        return +kinds

    @property
    def skipped_summary(self) -> str:
        """ "Skipped 12: 6 in private places, 2 marked private, 3 links outside the garden, 1 scanned PDF",
        or "" when none was."""
        kinds = self.skipped_kinds
        if not kinds:
            return ""
        return SKIPPED_SUMMARY.format(total=kinds.total(), counts=skipped_words(kinds.items()))


GARDEN_FILES = GARDEN_SUFFIXES  # what a garden's walk reads: the files of every format
GROUP_PASSAGES = 256  # embedded, then written, at a time: an interrupted import loses at most one group
# The groups with their vectors, in order: encoded in this process, or by the Celery workers.
Embedder = Callable[[Iterable[Sequence[Pending]], Progress | None], Iterator[Embedded]]
Spans = list[tuple[int, int]]  # where a note's passages start and end in its text
# The anchors of every held note (`_held`): one empty mapping for all, as a held note is never written to.
_NOTHING: dict[str, Any] = {}
IMPORT_STOPPED = "{reason} {stored} note(s) were stored before it stopped; run the import again to resume."
NOTE_UNEXPECTED = "could not be read ({error}); this is a fault of the import, please report it"
SYNCS_KEPT = 200
SKIPPED_SUMMARY = "Skipped {total}: {counts}."
LEFT_OUT = "left out of the garden: {reason}"
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


def _notes_read(
    files: Sequence[Path],
    folder: Path,
    root: Path,
    formats: GardenFormats,
    report: ImportReport,
    passage_counts: dict[str, int],
    access: AccessRules = NO_RULES,
) -> tuple[dict[str, ParsedArticle], dict[str, tuple[str, str]]]:
    """The notes by slug, and the notes present but withheld this time (private, or failed: a note that cannot
    be read fails closed), by place, with the slug their place gives and why (see `articles_unread`): they must
    be neither shown nor mistaken for deleted ones. Notes whose names make one slug are told apart (see
    `unique_slugs`).

    A note that its format can read again (`GardenFormats.rereadable`) is held with only what the sync decides by before writing
    (`_held`): it is read again, whole, when its group is written (`_notes_in_flight`), so the import holds
    the text of the notes in flight, not the garden's. How many passages it has is kept in `passage_counts`, by path,
    when its text may be new (its hash is none of this garden's revisions'), to make the groups."""
    known = set(
        ArticleRevision.objects.filter(article__garden=str(root)).values_list("content_hash", flat=True)
    )
    parsed_notes: list[ParsedArticle] = []
    unread: dict[str, tuple[str, str]] = {}
    for path in files:
        # Read at its place under the resolved folder: a link is read under its own name, never its target's.
        where = root / path.relative_to(folder) if folder.is_dir() else path.resolve()
        try:
            parsed = formats.parse(where, root if folder.is_dir() else None)
            if not parsed.private:
                parsed = audiences_placed(parsed, PurePosixPath(where.relative_to(root).as_posix()), access)
        except NoteLeftOut as left_out:
            report.skipped.append((str(path), left_out.kind, str(left_out)))
            unread[_place_of(path, folder)] = (
                _slug_of(path, folder, formats),
                LEFT_OUT.format(reason=left_out),
            )
            continue
        except Exception as raised:  # one note's text never stops a sync, whatever a parser raises on it
            error = _reading_failed(raised, path)
            report.failures.append((str(path), str(error)))
            unread[_place_of(path, folder)] = (
                _slug_of(path, folder, formats),
                UNREADABLE.format(reason=error),
            )
            continue
        if parsed.private:
            report.private += 1
            unread[parsed.relative_path or _place_of(path, folder)] = (parsed.slug, PRIVATE)
            continue
        if formats.rereadable(parsed):
            if parsed.content_hash not in known:
                passage_counts[parsed.path] = len(_spans(parsed))
            parsed = _held(parsed)
        parsed_notes.append(parsed)
    parsed_notes = formats.gathered(parsed_notes)
    report.notices += formats.notices
    return {parsed.slug: parsed for parsed in unique_slugs(parsed_notes)}, unread


def _reading_failed(error: Exception, path: Path) -> ArticleFileError:
    """Why a note could not be read, as the import reports it; what no parser should raise is logged too."""
    if isinstance(error, ArticleFileError):
        return error
    logger.exception("reading %s failed", shown(path), exc_info=error)
    return ArticleFileError(NOTE_UNEXPECTED.format(error=f"{type(error).__name__}: {error}"))


def _held(note: ParsedArticle) -> ParsedArticle:
    """What a sync holds of a note it reads again to write it: the names by which it finds and links it, its
    hash and the topics and themes its author gave it; not its text, nor what is read from it (title, tags,
    links, anchors, images: the topics and themes derived from them come after the reading again)."""
    return replace(note, body="", title="", tags=(), date=None, links=(), anchors=_NOTHING, images=())


def _spans(note: ParsedArticle) -> Spans:
    """Its passages: none runs across a page of a PDF, or into or out of words another note lends it."""
    breaks: list[int] = []
    for start, end, _ in sorted(note.borrowed, key=lambda stretch: (stretch[0], -stretch[1])):
        if not breaks or start >= breaks[-1]:  # a stretch inside another goes with it (it holds both places)
            breaks += [start, end]
    return [(span.start, span.end) for span in passage_spans(note.body, note.pages, breaks)]


def _imported_title(slug: str, digest: str) -> str | None:
    """The title under which a text of this hash was imported for this slug, or None: a format whose reading
    is dear (a PDF's costs tens of milliseconds a page) reads again only what changed."""
    revisions = ArticleRevision.objects.filter(article__slug=slug, content_hash=digest)
    return revisions.values_list("title", flat=True).first()


def _place_of(path: Path, folder: Path) -> str:
    """Where a file's note lives in its garden, as its article records it (`Article.path`: see
    `garden.formats.registry.place_of`)."""
    relative = path.relative_to(folder) if folder.is_dir() else Path(path.name)
    return place_of(relative)


def _slug_of(path: Path, folder: Path, formats: GardenFormats) -> str:
    """The slug the place of a note that is not read (private by its place, or failed) gives it, as its format
    says (a Logseq page's is its title's in the graph's file name format). Its article is found by its place
    first (`articles_unread`): this slug is for a note never imported there."""
    return formats.slug_of(path, _place_of(path, folder))


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


def _groups_write(
    groups: Iterable[Sequence[Pending]],
    report: ImportReport,
    embedder: Embedder,
    on_progress: Progress | None,
    *,
    derives: bool = False,
) -> None:
    """Embed and write the groups in turn, each written as soon as its vectors are there; `derives`: with the
    names each note gives the topics derived from it (`names_place`)."""
    for group, encoded, seconds in embedder(groups, on_progress):
        report.embedded += encoded
        report.embed_seconds += seconds
        began = time.perf_counter()
        _group_store(group, report)
        if derives:
            names_place(
                Article.objects.filter(slug__in=[item.parsed.slug for item in group]).values_list(
                    "pk", flat=True
                )
            )
        report.write_seconds += time.perf_counter() - began
        for item in group:  # stored: a garden's worth of vectors as Python floats would not fit (12 KB each)
            item.vectors = []
        # With DEBUG on (make run), Django keeps each query's SQL, every vector in it, until a request starts.
        reset_queries()


def _group_store(group: Sequence[Pending], report: ImportReport) -> None:
    """Write a group in one transaction (a few queries for the lot); should that fail, write its notes one by
    one, each in its own transaction, so one note the database refuses costs only itself, and is reported."""
    known = Known.of(group)
    try:
        with transaction.atomic():
            stored = [(group, notes_write(group, known))]
    except DatabaseError:
        stored = []
        for item in group:
            try:
                with transaction.atomic():
                    stored.append(([item], notes_write([item], known)))
            except DatabaseError as error:
                report.failures.append((item.parsed.path, f"could not be stored: {error}".strip()))
    for items, created in stored:
        report.created += created
        report.revised += len(items) - created
        report.passages += sum(len(item.spans) for item in items)


def _groups(planned: Sequence[tuple[ParsedArticle, int]]) -> list[list[ParsedArticle]]:
    """The notes to write, by their passage counts, in groups of about GROUP_PASSAGES passages."""
    groups: list[list[ParsedArticle]] = [[]]
    size = 0
    for note, count in planned:
        if size >= GROUP_PASSAGES:
            groups.append([])
            size = 0
        groups[-1].append(note)
        size += count
    return [group for group in groups if group]


def _notes_in_flight(
    groups: Iterable[Sequence[ParsedArticle]], load: Callable[[ParsedArticle], Pending | None]
) -> Iterator[list[Pending]]:
    """Each group's notes whole, as the group is taken: a held note is read again here."""
    for group in groups:
        loaded = [pending for note in group if (pending := load(note)) is not None]
        if loaded:
            yield loaded


def _note_again(
    note: ParsedArticle, root: Path | None, formats: GardenFormats, report: ImportReport
) -> ParsedArticle | None:
    """The note read again, whole, with what this import decided for it (its slug, the topics and themes its
    author gave it); None when it cannot be read now or turned private meanwhile (reported, or left to the
    next sync, which withholds it)."""
    try:
        again = formats.parse(Path(note.path), root)
    except Exception as raised:  # as in `_notes_read`: one note's text never stops a sync
        report.failures.append((note.path, str(_reading_failed(raised, Path(note.path)))))
        return None
    if again.private:
        return None
    # A text changed since the first reading keeps the first one's hash: the next sync sees the difference.
    return replace(
        again,
        slug=note.slug,
        topics=note.topics,
        themes=note.themes,
        content_hash=note.content_hash,
        audiences=note.audiences,
    )


def _vocabulary_placed(group: list[Pending], derived: DerivedVocabulary) -> list[Pending]:
    """The topics and themes derived from a group's notes stored, and the notes placed in them."""
    vocabulary, placed = vocabulary_derived(item.parsed for item in group)
    derived.store(vocabulary)
    for item in group:
        topics, themes = placed[item.parsed.slug]
        item.parsed = replace(
            item.parsed, topics=(*item.parsed.topics, *topics), themes=(*item.parsed.themes, *themes)
        )
    return group


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
    root = folder.resolve()
    is_garden = not folder.is_file()  # a folder, or one that should be there; a single note has no garden
    walk = garden_walk(folder, GARDEN_FILES) if folder.is_dir() else None
    if is_garden:
        problem = _folder_problem(folder)
        if problem is None and walk is not None and not (walk.files or walk.private or walk.skipped):
            problem = GARDEN_EMPTY, ""
        if problem is not None:
            template, reason = problem
            count = articles_in_garden(root).count()
            if count and not allow_mass_retire:
                message = template.format(folder=folder, count=count, reason=reason) + ON_PURPOSE
                report.refused.append((str(folder), message))
                return
            if template is not GARDEN_EMPTY and not count:
                report.failures.append(
                    (str(folder), NO_GARDEN.format(reason=reason or "no such file or folder"))
                )
                return
            if walk is None:
                report.retired += articles_retire(root, present=set())
                return
    files = walk.files if walk is not None else [folder]
    if walk is not None:
        report.private_places += len(walk.private)
        for path, reason in walk.skipped:
            kind = walk.kinds.get(path)
            if kind is None:
                report.failures.append((shown(path), reason))
            else:
                report.skipped.append((shown(path), kind, reason))
    passage_counts: dict[str, int] = {}
    # A Logseq graph's config.edn, an Org garden's ids: read once a sync, the latter from the garden's walk.
    formats = formats_opened(folder, _imported_title, lambda suffixes: garden_walk(folder, suffixes).files)
    access = access_rules(root) if folder.is_dir() else NO_RULES
    notes, unread = _notes_read(files, folder, root, formats, report, passage_counts, access)
    del files
    if walk is not None:
        walk = replace(walk, files=[])  # read: a path each is no longer needed while the notes are written
        unread |= {
            _place_of(path, folder): (_slug_of(path, folder, formats), PRIVATE) for path in walk.private
        }
    withheld = articles_unread(root, unread, public=notes)
    del unread
    if walk is not None:
        roots = gardens_synced(root, notes)
        withheld |= articles_made_private(root, roots, set(notes) | set(withheld), walk.private)
    notes, moved = withheld_addresses_kept(notes, withheld)
    report.notices += [
        (note.path, ADDRESS_WITHHELD.format(asked=asked, slug=note.slug)) for note, asked in moved
    ]
    if walk is not None:
        kept = set(notes) | set(withheld)
        missing = articles_missing_count(root, roots, kept, arrivals={p.content_hash for p in notes.values()})
        count = articles_in_garden(root, roots).count()
        if missing * 2 > count and not allow_mass_retire:
            message = MASS_RETIRE.format(missing=missing, count=count) + ON_PURPOSE
            report.refused.append((str(folder), message))
            return
    try:
        vocabulary_apply(read_vocabulary(folder))
    except ArticleFileError as error:
        report.failures.append((str(folder), str(error)))
    report.withheld += articles_withhold(withheld)
    audiences_write(notes)
    if walk is not None:
        report.moved += articles_move(root, notes, roots, renamed)
    resolver = link_resolver(list(notes.values()))
    changed = notes_changed(list(notes.values()), history=history)
    report.unchanged += len(notes) - len(changed)
    articles_restore(sorted(set(notes) - {p.slug for p in changed}))
    present = set(notes) | set(withheld)
    del notes  # the unchanged notes are done with: only the changed ones are held while they are written
    images = cache(partial(ImageFinder, folder))  # the garden's images are listed when a note first shows one
    reread_root = root if folder.is_dir() else None

    def whole(note: ParsedArticle) -> ParsedArticle | None:
        """The note with its text: read again if it was held (`_held`)."""
        return _note_again(note, reread_root, formats, report) if formats.rereadable(note) else note

    def load(note: ParsedArticle) -> Pending | None:
        if (read := whole(note)) is None:
            return None
        return Pending(
            read,
            _spans(read),
            links=links_resolve(read, resolver),
            images=images().store(read) if read.images else {},
        )

    def passages(note: ParsedArticle) -> int:
        """How many passages a changed note has: counted at its first reading, else (a text that reading took
        for one imported before, which `notes_changed` found new for its article: rare) read again."""
        if note.path in passage_counts:
            return passage_counts[note.path]
        return len(_spans(read)) if (read := whole(note)) is not None else 0

    planned = [(p, passages(p)) for p in changed]
    derives = folder.is_dir() and not has_vocabulary_file(folder)
    written = [p.slug for p in changed] if derives else []
    named_before = topics_of(Article.objects.filter(slug__in=written).values_list("pk", flat=True))
    passage_counts.clear()
    to_write = sum(count for _, count in planned)
    if on_start:
        on_start(to_write)
    groups = _notes_in_flight(_groups(planned), load)
    del planned, changed
    if derives:
        # Derived and stored a group at a time, as the group is written: not the whole garden's names at once.
        groups = map(partial(_vocabulary_placed, derived=DerivedVocabulary()), groups)
    # With DEBUG on (make run), Django keeps the SQL of the sync's planning, lists of every note's slug in it.
    reset_queries()
    with vector_index_deferred(to_write):
        _groups_write(groups, report, embedder, on_progress, derives=derives)
    if derives:  # a changed note's names, and those it no longer gives, are its topics' as its notes say now
        topics_rederive(Article.objects.filter(slug__in=written).values_list("pk", flat=True), named_before)
    red_links_resolve(resolver)
    if walk is not None:
        report.retired += articles_retire(root, present=present, roots=roots)
        articles_adopt(root, present)


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


def sync_record(folders: Sequence[Path], report: ImportReport) -> Sync:
    """Keep what this sync did, refused and could not import, for the logs page and `/api/health`; the
    last SYNCS_KEPT are kept (a watched or scheduled garden syncs hundreds of times a day)."""
    sync = Sync.objects.create(
        folders=[str(folder) for folder in folders],
        refused="\n".join(message for _, message in report.refused),
        failures=[list(failure) for failure in report.failures],
        counts={
            "created": report.created,
            "revised": report.revised,
            "unchanged": report.unchanged,
            "moved": report.moved,
            "retired": report.retired,
            "withheld": report.withheld,
            "private": report.private,
            "skipped": dict(report.skipped_kinds),
        },
    )
    Sync.objects.filter(pk__in=Sync.objects.values("pk")[SYNCS_KEPT:]).delete()
    return sync
