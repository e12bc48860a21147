"""A garden's notes read for an import: each file parsed by its format, the notes present but withheld
(private, or unreadable: they fail closed) told apart from those to import, and a note held while it waits to be
written read again, whole, when its group is."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from garden.formats.note import ArticleFileError, ParsedArticle
from garden.formats.protocol import NoteLeftOut
from garden.formats.registry import GardenFormats, place_of
from garden.models import ArticleRevision
from garden.passages import passage_spans
from garden.sync.access import NO_RULES, AccessRules, audiences_placed
from garden.sync.lifecycle import PRIVATE, UNREADABLE
from garden.sync.naming import unique_slugs
from garden.sync.report import ImportReport
from garden.walk import shown

logger = logging.getLogger(__name__)

Spans = list[tuple[int, int]]  # where a note's passages start and end in its text
# The anchors of every held note (`_held`): one empty mapping for all, as a held note is never written to.
_NOTHING: dict[str, Any] = {}
NOTE_UNEXPECTED = "could not be read ({error}); this is a fault of the import, please report it"
LEFT_OUT = "left out of the garden: {reason}"


def notes_read(
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
    (`_held`): it is read again, whole, when its group is written (`note_reread`), so the import holds
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
            unread[note_place(path, folder)] = (
                unread_slug(path, folder, formats),
                LEFT_OUT.format(reason=left_out),
            )
            continue
        except Exception as raised:  # one note's text never stops a sync, whatever a parser raises on it
            error = _reading_failed(raised, path)
            report.failures.append((str(path), str(error)))
            unread[note_place(path, folder)] = (
                unread_slug(path, folder, formats),
                UNREADABLE.format(reason=error),
            )
            continue
        if parsed.private:
            report.private += 1
            unread[parsed.relative_path or note_place(path, folder)] = (parsed.slug, PRIVATE)
            continue
        if formats.rereadable(parsed):
            if parsed.content_hash not in known:
                passage_counts[parsed.path] = len(note_spans(parsed))
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


def note_spans(note: ParsedArticle) -> Spans:
    """Its passages: none runs across a page of a PDF, or into or out of words another note lends it."""
    breaks: list[int] = []
    for start, end, _ in sorted(note.borrowed, key=lambda stretch: (stretch[0], -stretch[1])):
        if not breaks or start >= breaks[-1]:  # a stretch inside another goes with it (it holds both places)
            breaks += [start, end]
    return [(span.start, span.end) for span in passage_spans(note.body, note.pages, breaks)]


def imported_title(slug: str, digest: str) -> str | None:
    """The title under which a text of this hash was imported for this slug, or None: a format whose reading
    is dear (a PDF's costs tens of milliseconds a page) reads again only what changed."""
    revisions = ArticleRevision.objects.filter(article__slug=slug, content_hash=digest)
    return revisions.values_list("title", flat=True).first()


def note_place(path: Path, folder: Path) -> str:
    """Where a file's note lives in its garden, as its article records it (`Article.path`: see
    `garden.formats.registry.place_of`)."""
    relative = path.relative_to(folder) if folder.is_dir() else Path(path.name)
    return place_of(relative)


def unread_slug(path: Path, folder: Path, formats: GardenFormats) -> str:
    """The slug the place of a note that is not read (private by its place, or failed) gives it, as its format
    says (a Logseq page's is its title's in the graph's file name format). Its article is found by its place
    first (`articles_unread`): this slug is for a note never imported there."""
    return formats.slug_of(path, note_place(path, folder))


def note_reread(
    note: ParsedArticle, root: Path | None, formats: GardenFormats, report: ImportReport
) -> ParsedArticle | None:
    """The note read again, whole, with what this import decided for it (its slug, the topics and themes its
    author gave it); None when it cannot be read now or turned private meanwhile (reported, or left to the
    next sync, which withholds it)."""
    try:
        again = formats.parse(Path(note.path), root)
    except Exception as raised:  # as in `notes_read`: one note's text never stops a sync
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
