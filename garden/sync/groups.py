"""The changed notes of an import written a group at a time: each group read whole (a held note read again),
embedded (in this process, or on the Celery workers), the next group's encoding overlapping this group's writes,
and stored in one transaction; in a garden without a vocabulary file, the topics derived from the notes with them."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from functools import cache, partial
from pathlib import Path

from django.db import DatabaseError, reset_queries, transaction

from garden.formats.note import ParsedArticle
from garden.formats.registry import GardenFormats
from garden.models import Article
from garden.sync.embedding import Embedded, Progress
from garden.sync.images import ImageFinder
from garden.sync.indexing import vector_index_deferred
from garden.sync.linking import links_resolve
from garden.sync.links import LinkResolver
from garden.sync.reading import note_reread, note_spans
from garden.sync.report import ImportReport
from garden.sync.topic_names import names_place, topics_of, topics_rederive
from garden.sync.writing import DerivedVocabulary, Known, Pending, notes_write
from garden.vocabulary import has_vocabulary_file, vocabulary_derived

GROUP_PASSAGES = (
    256  # passages embedded, then written, at a time: an interrupted import loses at most one group
)
# The groups with their vectors, in order: encoded in this process, or by the Celery workers.
Embedder = Callable[[Iterable[Sequence[Pending]], Progress | None], Iterator[Embedded]]


def changes_write(
    changed: Sequence[ParsedArticle],
    folder: Path,
    formats: GardenFormats,
    resolver: LinkResolver,
    passage_counts: dict[str, int],
    report: ImportReport,
    embedder: Embedder,
    on_start: Callable[[int], None] | None,
    on_progress: Progress | None,
) -> None:
    """Write the changed notes, embedded a group at a time, a held note read again when its group is taken;
    in a garden without a vocabulary file, the topics and themes derived from them with them."""
    images = cache(partial(ImageFinder, folder))  # the garden's images are listed when a note first shows one
    reread_root = folder.resolve() if folder.is_dir() else None

    def whole(note: ParsedArticle) -> ParsedArticle | None:
        """The note with its text: read again if it was held (`garden.sync.reading`)."""
        return note_reread(note, reread_root, formats, report) if formats.rereadable(note) else note

    def load(note: ParsedArticle) -> Pending | None:
        if (read := whole(note)) is None:
            return None
        return Pending(
            read,
            note_spans(read),
            links=links_resolve(read, resolver),
            images=images().store(read) if read.images else {},
        )

    def passages(note: ParsedArticle) -> int:
        """How many passages a changed note has: counted at its first reading, else (a text that reading took
        for one imported before, which `notes_changed` found new for its article: rare) read again."""
        if note.path in passage_counts:
            return passage_counts[note.path]
        return len(note_spans(read)) if (read := whole(note)) is not None else 0

    planned = [(p, passages(p)) for p in changed]
    derives = folder.is_dir() and not has_vocabulary_file(folder)
    written = [p.slug for p in changed] if derives else []
    named_before = topics_of(Article.objects.filter(slug__in=written).values_list("pk", flat=True))
    passage_counts.clear()
    to_write = sum(count for _, count in planned)
    if on_start:
        on_start(to_write)
    groups = _notes_in_flight(_groups(planned), load)
    del planned
    if derives:
        # Derived and stored a group at a time, as the group is written: not the whole garden's names at once.
        groups = map(partial(_vocabulary_placed, derived=DerivedVocabulary()), groups)
    # With DEBUG on (make run), Django keeps the SQL of the sync's planning, lists of every note's slug in it.
    reset_queries()
    with vector_index_deferred(to_write):
        _groups_write(groups, report, embedder, on_progress, derives=derives)
    if derives:  # a changed note's names, and those it no longer gives, are its topics' as its notes say now
        topics_rederive(Article.objects.filter(slug__in=written).values_list("pk", flat=True), named_before)


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
