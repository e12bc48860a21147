"""Reading a PDF of the garden as a note: its text layer, page by page (pypdf, in `garden.formats.pdf.text_layer`).

A PDF's article is titled by its metadata title, else its file name. Its body is its pages' text, one after
the other, each page starting at an offset kept in `ParsedArticle.pages`, so a passage knows its page ("Hive
care, p. 2") and never runs across two. A PDF has no front matter: it is private only by its place (a private
folder, `.gardenignore`). Its `content_hash` is the hash of its bytes, so an unchanged PDF is not read again.

A PDF that should not be imported by the garden's rules (no text layer: a scan; over the size or page caps)
raises `PdfLeftOut`, counted as skipped; one that should be and cannot be (encrypted, broken, too slow to read)
raises `ArticleFileError`, a failure. Nothing here raises anything else, whatever the file holds.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from django.conf import settings

from garden.formats.files import CANNOT_READ, size_text
from garden.formats.note import ArticleFileError, ParsedArticle, article_slug
from garden.formats.pdf import text_layer
from garden.formats.protocol import GardenFiles, ImportedTitle, NoteLeftOut
from garden.skips import SkipKind

PDF_SUFFIX = ".pdf"
PAGE_BREAK = "\n\n"  # between two pages' text in the body: a paragraph break, so no sentence runs across
NO_TEXT_LAYER = "has no text layer (a scanned PDF?); run OCR on it to import its text"
PDF_TOO_LARGE = "is {size}; PDFs are limited to {limit} (GARDEN_PDF_MAX_BYTES)"
PDF_TOO_MANY_PAGES = "has {pages:,} pages; PDFs are limited to {limit:,} (GARDEN_PDF_MAX_PAGES)"
PDF_ENCRYPTED = "is encrypted with a password; save an unprotected copy to import it"
PDF_BROKEN = "is not a readable PDF ({error})"
PDF_TOO_SLOW = "took over {seconds:g} s to read, and was left unread (GARDEN_PDF_MAX_SECONDS)"
PDF_TOO_BIG_TO_READ = "needs more than {limit} of memory to read, and was left unread"
PDF_READER_FAILED = "could not be read: the reader stopped ({detail})"
_PROJECT = Path(__file__).resolve().parent.parent  # where the reader's process imports `garden` from


class PdfLeftOut(NoteLeftOut):
    """A PDF left out on purpose, by a rule of the garden: counted as skipped, with its kind and reason."""


def is_pdf(path: Path | str) -> bool:
    return str(path).lower().endswith(PDF_SUFFIX)


def pdf_place(relative: Path) -> str:
    """A PDF's place in the garden, its suffix kept (`Papers/Hive study.pdf`): its slug and path then differ
    from those of a note named like it (`Papers/Hive study.md`, often the notes on that paper)."""
    return relative.as_posix()


def pdf_hash(data: bytes) -> str:
    """What tells one PDF from another (`ArticleRevision.content_hash`): its bytes."""
    return hashlib.sha256(data).hexdigest()


def _left_out_or_failed(said: dict[str, object], max_pages: int) -> Exception:
    """What the reader said instead of a text layer, as the import reports it."""
    if "page_count" in said:
        count = int(str(said["page_count"]))
        return PdfLeftOut(PDF_TOO_MANY_PAGES.format(pages=count, limit=max_pages), SkipKind.PDF_OVER_CAP)
    if "encrypted" in said:
        return ArticleFileError(PDF_ENCRYPTED)
    if "memory" in said:
        return ArticleFileError(PDF_TOO_BIG_TO_READ.format(limit=size_text(int(str(said["memory"])))))
    return ArticleFileError(PDF_BROKEN.format(error=said.get("broken", "no text layer could be read")))


def text_layer_bounded(data: bytes, *, max_pages: int, max_seconds: float) -> tuple[str, list[str]]:
    """The PDF's metadata title and its pages' text, read by `garden.formats.pdf.text_layer` in a process of its
    own that is stopped after `max_seconds`. pypdf reads a content stream operator by operator in Python (about 7 s a MB
    here), and a file of a few kB can hold a compressed stream of 75 MB: no check between pages bounds one
    page. A separate program, not a forked one: a Celery worker's process may have no children of its own."""
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(_PROJECT), os.environ.get("PYTHONPATH")])),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", text_layer.__name__, str(max_pages)],
            input=data,
            capture_output=True,
            timeout=max_seconds,
            env=environment,
            check=False,
        )
    except subprocess.TimeoutExpired:  # run() has killed it
        raise ArticleFileError(PDF_TOO_SLOW.format(seconds=max_seconds)) from None
    except OSError as error:
        raise ArticleFileError(PDF_READER_FAILED.format(detail=error.strerror or error)) from None
    try:
        said = json.loads(done.stdout)
    except ValueError:  # it died without a word: killed for its memory, or crashed
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [
            f"exit code {done.returncode}"
        ]
        raise ArticleFileError(PDF_READER_FAILED.format(detail=detail[0][:300])) from None
    if "pages" not in said:
        raise _left_out_or_failed(said, max_pages)
    return str(said["title"]), [str(page) for page in said["pages"]]


def parse_pdf_file(
    path: Path,
    root: Path | None = None,
    *,
    max_bytes: int,
    max_pages: int,
    max_seconds: float,
    imported: ImportedTitle | None = None,
) -> ParsedArticle:
    """The PDF at `path` as an article; its slug is its place below `root`, suffix kept (see `pdf_place`).
    Its size is known (stat) before any of it is read, its page count before any page is.

    `imported(slug, content_hash)` gives the title these very bytes were imported under before, if they were:
    such a PDF is not read again (its text would be skipped as unchanged anyway), and its article comes back
    with no body."""
    try:
        status = path.stat()
        if status.st_size > max_bytes:
            raise PdfLeftOut(
                PDF_TOO_LARGE.format(size=size_text(status.st_size), limit=size_text(max_bytes)),
                SkipKind.PDF_OVER_CAP,
            )
        with path.open("rb") as file:
            data = file.read(max_bytes + 1)
    except OSError as error:
        raise ArticleFileError(CANNOT_READ.format(error=error.strerror or error)) from None
    if len(data) > max_bytes:  # it grew since its size was read
        raise PdfLeftOut(
            PDF_TOO_LARGE.format(size=f"over {size_text(max_bytes)}", limit=size_text(max_bytes)),
            SkipKind.PDF_OVER_CAP,
        )
    inside = root is not None and root != path and path.is_relative_to(root)
    relative = path.relative_to(root) if root is not None and inside else Path(path.name)
    place = pdf_place(relative)
    slug, digest = article_slug(place, place), pdf_hash(data)
    modified = datetime.datetime.fromtimestamp(status.st_mtime, tz=datetime.UTC).date()
    stored_title = imported(slug, digest) if imported is not None else None
    if stored_title is not None:  # these bytes were read before: nothing of them is read again
        return ParsedArticle(
            slug=slug,
            title=stored_title,
            topics=(),
            themes=(),
            date=modified,
            body="",
            path=str(path),
            content_hash=digest,
            relative_path=place,
        )
    title, texts = text_layer_bounded(data, max_pages=max_pages, max_seconds=max_seconds)
    if not any(texts):
        raise PdfLeftOut(NO_TEXT_LAYER, SkipKind.SCANNED_PDF)
    starts: list[int] = []
    body = ""
    for number, text in enumerate(texts):
        body += PAGE_BREAK if number else ""
        starts.append(len(body))
        body += text
    return ParsedArticle(
        slug=slug,
        title=title or PurePosixPath(relative.as_posix()).stem,
        topics=(),
        themes=(),
        date=modified,
        body=body,
        path=str(path),
        content_hash=digest,
        relative_path=place,
        pages=tuple(starts),
    )


class PdfContext:
    """A garden's PDFs for one sync: each read in a process of its own, so never read twice in one."""

    def __init__(self, imported: ImportedTitle | None) -> None:
        self.imported = imported
        self.notices: list[tuple[str, str]] = []

    def owns(self, path: Path) -> bool:
        return is_pdf(path)

    def parse(self, path: Path, root: Path | None) -> ParsedArticle:
        return parse_pdf_file(
            path,
            root=root,
            max_bytes=settings.GARDEN_PDF_MAX_BYTES,
            max_pages=settings.GARDEN_PDF_MAX_PAGES,
            max_seconds=settings.GARDEN_PDF_MAX_SECONDS,
            imported=self.imported,
        )

    def slug_of(self, place: str) -> str:
        return article_slug(place, place)

    def rereadable(self, note: ParsedArticle) -> bool:
        return False  # a second reading would cost a second process

    def gathered(self, notes: Sequence[ParsedArticle]) -> list[ParsedArticle]:
        return list(notes)


class PdfFormat:
    """PDFs, by their text layer; private only by their place, as they have no front matter."""

    name = "pdf"
    suffixes = frozenset({PDF_SUFFIX})

    def place_of(self, relative: PurePosixPath) -> str:
        return pdf_place(Path(relative))

    def content_hash(self, data: bytes) -> str:
        return pdf_hash(data)

    def private_place(self, relative: PurePosixPath) -> bool:
        return False

    def public_place(self, relative: PurePosixPath) -> bool:
        return False

    def opened(
        self, root: Path | None, imported: ImportedTitle | None, files: GardenFiles | None
    ) -> PdfContext:
        return PdfContext(imported)


FORMAT = PdfFormat()
