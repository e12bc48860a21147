"""Reading a note's file, as every format whose notes are each a text file of their own reads it (Markdown, Org):
its size known (stat) before any of it is read, a folder or special file refused, its bytes UTF-8; and what such
a format's sync context says of each note (`FileByFile`) and what such a format says of itself (`FileByFileFormat`),
so that each states only what differs. Why a file cannot be read (`CANNOT_READ`, `NOT_A_FILE`)
reads the same whether a format or the garden's walk (`garden.walk`) found it so.
"""

from __future__ import annotations

import datetime
import hashlib
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from garden.formats.note import ArticleFileError, ParsedArticle, article_slug

CANNOT_READ = "cannot be read: {error}"
NOT_A_FILE = "is not a regular file (it is a {kind}); only files are read"
NOTE_TOO_LARGE = "is {size}; notes are limited to {limit} (GARDEN_NOTE_MAX_BYTES)"
NOT_UTF8 = "not valid UTF-8 text (byte {start})"


def size_text(size: int) -> str:
    """A file's size as a failure message shows it: "2.4 MB", or "1,200 bytes" below a tenth of a megabyte."""
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size:,} bytes"


def note_text(raw: str) -> str:
    """A note's text as it is read and hashed: Unix line ends, no byte-order mark."""
    return raw.replace("\r\n", "\n").lstrip("\ufeff")


def content_hash(raw: str) -> str:
    """What tells one text of a note from another (`ArticleRevision.content_hash`; the rule for every kind of
    revision is in `garden.services`). Never changed: every note imported before would be imported again."""
    return hashlib.sha256(note_text(raw).encode()).hexdigest()


def note_file_read(path: Path, max_bytes: int | None = None) -> tuple[str, datetime.date]:
    """The text of the note's file at `path` and the date it was last modified. A file larger than `max_bytes`
    is not read: its size is known (stat) before any of it is. Raises ArticleFileError saying why it cannot be
    read (a folder or a special file, too large, not UTF-8, the system's error)."""
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):
            raise ArticleFileError(
                NOT_A_FILE.format(kind="folder" if stat.S_ISDIR(status.st_mode) else "special file")
            )
        if max_bytes is not None and status.st_size > max_bytes:
            raise ArticleFileError(
                NOTE_TOO_LARGE.format(size=size_text(status.st_size), limit=size_text(max_bytes))
            )
        with path.open("rb") as note:
            data = note.read() if max_bytes is None else note.read(max_bytes + 1)
        if max_bytes is not None and len(data) > max_bytes:  # it grew since its size was read
            raise ArticleFileError(
                NOTE_TOO_LARGE.format(size=f"over {size_text(max_bytes)}", limit=size_text(max_bytes))
            )
        raw = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ArticleFileError(NOT_UTF8.format(start=error.start)) from None
    except OSError as error:
        raise ArticleFileError(CANNOT_READ.format(error=error.strerror or error)) from None
    return raw, datetime.datetime.fromtimestamp(status.st_mtime, tz=datetime.UTC).date()


class FileByFile:
    """What a sync context says of notes that are each a file read on its own: it reads the files of its
    `suffixes`, a note's slug is its place, it may be read again to be written, and the notes read are the notes
    (none gathered from others). It has nothing to tell of the garden (`notices`)."""

    suffixes: frozenset[str]

    def __init__(self) -> None:
        self.notices: list[tuple[str, str]] = []

    def owns(self, path: Path) -> bool:
        return path.suffix.lower() in self.suffixes

    def slug_of(self, place: str) -> str:
        return article_slug(place, place)

    def rereadable(self, note: ParsedArticle) -> bool:
        return True

    def gathered(self, notes: Sequence[ParsedArticle]) -> list[ParsedArticle]:
        return list(notes)


class FileByFileFormat:
    """What a format whose notes are each a text file says of itself: a note lives at its file's path without
    the suffix, one text is told from another by `content_hash` of it, and it has no places of its own, private
    or public. A format states its `name`, `suffixes` and `opened`, and what else differs."""

    name: str
    suffixes: frozenset[str]

    def place_of(self, relative: PurePosixPath) -> str:
        return relative.with_suffix("").as_posix()

    def content_hash(self, data: bytes) -> str:
        return content_hash(data.decode("utf-8", errors="replace"))

    def private_place(self, relative: PurePosixPath) -> bool:
        return False

    def public_place(self, relative: PurePosixPath) -> bool:
        return False
