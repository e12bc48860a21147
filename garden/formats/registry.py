"""The garden formats, registered in one place (`FORMATS`), and what the walk, the import and the watcher ask of
them: which files a garden's walk reads, which places are private, where a file's note lives, and, for one sync,
the formats opened on the garden (`formats_opened`), the first whose context owns a file reading it.

Adding a format is a module or folder of `garden/formats/` that implements `garden.formats.protocol` and a line
here. The order matters where two formats read one suffix: a Logseq graph's pages are Markdown files, read as
Logseq shows them when the folder is a graph, and as Markdown notes when it is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath

from garden.formats import markdown
from garden.formats.logseq import reading as logseq
from garden.formats.note import ParsedArticle
from garden.formats.org import reading as org
from garden.formats.pdf import reading as pdf
from garden.formats.protocol import FormatContext, GardenFiles, GardenFormat, ImportedTitle

FORMATS: tuple[GardenFormat, ...] = (logseq.FORMAT, pdf.FORMAT, markdown.FORMAT, org.FORMAT)
# What reads a file no format owns (a single file named on the command line, whatever its suffix).
FALLBACK: GardenFormat = markdown.FORMAT
GARDEN_SUFFIXES = frozenset(suffix for garden_format in FORMATS for suffix in garden_format.suffixes)


def format_of(path: PurePath | str) -> GardenFormat | None:
    """The first format that reads files of this one's suffix (any case), or None."""
    suffix = PurePosixPath(str(path)).suffix.lower()
    return next((f for f in FORMATS if suffix in f.suffixes), None)


def is_note(path: PurePath | str) -> bool:
    """Whether a garden's walk reads the file at `path`: a format reads its suffix."""
    return format_of(path) is not None


def place_of(relative: PurePath) -> str:
    """Where the file at `relative` (below its garden's folder) lives in the garden, as its article records it
    (`Article.path`): a Markdown note without `.md`, a PDF with its suffix."""
    posix = PurePosixPath(relative.as_posix())
    return (format_of(relative) or FALLBACK).place_of(posix)


def suffix_kept(place: str) -> bool:
    """Whether the note at `place` keeps its file's suffix there (a PDF's does): its file's name is then its
    place's name without the suffix."""
    kept = format_of(place)
    return kept is not None and kept.place_of(PurePosixPath(place)) == place


def file_hash(path: PurePath, data: bytes) -> str:
    """What tells one text of the file at `path` from another, as its revisions record it (`content_hash`)."""
    return (format_of(path) or FALLBACK).content_hash(data)


def private_place(relative: PurePosixPath) -> bool:
    """Whether a format keeps `relative` out as one of its own places (Logseq's copies of pages)."""
    return any(garden_format.private_place(relative) for garden_format in FORMATS)


def public_place(relative: PurePosixPath) -> bool:
    """Whether a format publishes `relative`, whose name the garden's rules keep private (Hugo's `_index.md`)."""
    return any(garden_format.public_place(relative) for garden_format in FORMATS)


@dataclass(frozen=True)
class GardenFormats:
    """The formats opened on one garden for one sync."""

    contexts: tuple[FormatContext, ...]
    fallback: FormatContext

    def owner(self, path: Path) -> FormatContext:
        """The context that reads the file at `path`: the first that owns it."""
        return next((context for context in self.contexts if context.owns(path)), self.fallback)

    def parse(self, path: Path, root: Path | None) -> ParsedArticle:
        return self.owner(path).parse(path, root)

    def slug_of(self, path: Path, place: str) -> str:
        return self.owner(path).slug_of(place)

    def rereadable(self, note: ParsedArticle) -> bool:
        return self.owner(Path(note.path)).rereadable(note)

    def gathered(self, notes: Sequence[ParsedArticle]) -> list[ParsedArticle]:
        """The garden's notes as every format has them shown, once all are read."""
        gathered = list(notes)
        for context in self.contexts:
            gathered = context.gathered(gathered)
        return gathered

    @property
    def notices(self) -> list[tuple[str, str]]:
        return [notice for context in self.contexts for notice in context.notices]


def formats_opened(
    folder: Path | None, imported: ImportedTitle | None = None, files: GardenFiles | None = None
) -> GardenFormats:
    """Every format opened on the garden at `folder` (None, or a file: a single note) for one sync; `files` is
    the garden's walk (`garden.walk`), for a format that reads across its garden."""
    garden = folder if folder is not None and folder.is_dir() else None
    contexts = tuple(garden_format.opened(garden, imported, files) for garden_format in FORMATS)
    fallback = contexts[FORMATS.index(FALLBACK)]
    return GardenFormats(contexts, fallback)
