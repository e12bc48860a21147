"""The one protocol a garden format implements (decision 0004), so that the walk, the import and the watcher ask
the registered formats (`garden.formats.registry`) instead of naming them.

A format says, of itself: the file suffixes it reads, where a file's note lives in its garden (`place_of`), what
tells one text of a file from another (`content_hash`), and the places of its own that are never imported
(`private_place`) or that the garden's rules would keep out and it publishes (`public_place`: Hugo's section
pages). Opened on a garden's folder once a sync (`opened`, with the garden's walk handed in), it gives a `FormatContext`: which files it reads there
(`owns`), each read into a note (`parse`, which raises `ArticleFileError`, or `NoteLeftOut` for a file the
garden's rules leave out), the slug of a note it could not read (`slug_of`), whether a note may be read again to
be written (`rereadable`), and the notes of the whole garden once read, for a format whose notes hold each other's
text (`gathered`: a Logseq graph's block references). What a format needs across the files of a garden stays in
its context; the note type (`ParsedArticle`) carries only what the shared stages read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from garden.formats.note import ParsedArticle
    from garden.skips import SkipKind

# The title under which a text of this hash was imported for this slug, or None (the import asks the database):
# a format whose reading is dear (a PDF's) reads again only what changed.
ImportedTitle = Callable[[str, str], str | None]
# The files with these suffixes that the garden's walk imports (`garden.walk`: private places left out), handed in
# by the sync: a format that reads across its garden (Org's ids) asks it, and imports nothing of the walk, which
# asks every format its places.
GardenFiles = Callable[[frozenset[str]], list[Path]]


class NoteLeftOut(Exception):
    """A file left out on purpose, by a rule of the garden (a scanned PDF, one over the caps): counted as
    skipped, with its kind and reason, not as a failure."""

    def __init__(self, message: str, kind: SkipKind) -> None:
        super().__init__(message)
        self.kind = kind


class FormatContext(Protocol):
    """A format opened on one garden for one sync."""

    # (path, message): what the import prints about the garden as this format read it (a config it could not
    # read whole, two pages of one title).
    notices: list[tuple[str, str]]

    def owns(self, path: Path) -> bool:
        """Whether this format reads the file at `path` in this garden."""
        ...

    def parse(self, path: Path, root: Path | None) -> ParsedArticle:
        """The note at `path`, its place below `root` (the garden's folder; None for a single file)."""
        ...

    def slug_of(self, place: str) -> str:
        """The slug of the note at `place` (`place_of`) that was not read: private by its place, or failed."""
        ...

    def rereadable(self, note: ParsedArticle) -> bool:
        """Whether the note's text may be dropped after its first reading and read again to be written."""
        ...

    def gathered(self, notes: Sequence[ParsedArticle]) -> list[ParsedArticle]:
        """The garden's notes once all are read (every format's, in order), as this format has them shown."""
        ...


class GardenFormat(Protocol):
    """A format of garden files, registered in `garden.formats.registry.FORMATS`."""

    name: str
    suffixes: frozenset[str]  # lower case, with their dot

    def place_of(self, relative: PurePosixPath) -> str:
        """Where the file at `relative` (below the garden's folder) lives in the garden (`Article.path`)."""
        ...

    def content_hash(self, data: bytes) -> str:
        """What tells one text of a file from another (`ArticleRevision.content_hash`). Never changed."""
        ...

    def private_place(self, relative: PurePosixPath) -> bool:
        """Whether `relative` is one of this format's own places, never imported (Logseq's copies of pages)."""
        ...

    def public_place(self, relative: PurePosixPath) -> bool:
        """Whether `relative`, which the garden's rules keep private by its name, is published by this format."""
        ...

    def opened(
        self, root: Path | None, imported: ImportedTitle | None, files: GardenFiles | None
    ) -> FormatContext:
        """This format on the garden at `root` (None: a single file), for one sync."""
        ...
