"""Reading a PDF of the garden as a note: its text layer, page by page (pypdf).

A PDF's article is titled by its metadata title, else its file name. Its body is its pages' text, one after
the other, each page starting at an offset kept in `ParsedArticle.pages`, so a passage knows its page ("Hive
care, p. 2") and never runs across two. A PDF has no front matter: it is private only by its place (a private
folder, `.gardenignore`). Its `content_hash` is the hash of its bytes, so an unchanged PDF is not read again.

A PDF that should not be imported by the garden's rules (no text layer: a scan; over the size or page caps)
raises `PdfLeftOut`, counted as skipped; one that should be and cannot be (encrypted, broken) raises
`ArticleFileError`, a failure. Nothing here raises anything else, whatever the file holds.
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import logging
import multiprocessing
import re
import resource
from collections.abc import Callable
from io import BytesIO
from multiprocessing.connection import Connection
from pathlib import Path, PurePosixPath

from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError, PdfReadError

from garden.importer import ArticleFileError, ParsedArticle, article_slug
from garden.walk import CANNOT_READ, SkipKind

PDF_SUFFIX = ".pdf"
PAGE_BREAK = "\n\n"  # between two pages' text in the body: a paragraph break, so no sentence runs across
NO_TEXT_LAYER = "has no text layer (a scanned PDF?); run OCR on it to import its text"
PDF_TOO_LARGE = "is {size}; PDFs are limited to {limit} (GARDEN_PDF_MAX_BYTES)"
PDF_TOO_MANY_PAGES = "has {pages:,} pages; PDFs are limited to {limit:,} (GARDEN_PDF_MAX_PAGES)"
PDF_ENCRYPTED = "is encrypted with a password; save an unprotected copy to import it"
PDF_BROKEN = "is not a readable PDF ({error})"
PDF_TOO_SLOW = "took over {seconds:g} s to read, and was left unread (GARDEN_PDF_MAX_SECONDS)"
PDF_TOO_BIG_TO_READ = "needs more than {limit} of memory to read, and was left unread"
PDF_READER_DIED = "could not be read: the reader stopped (exit code {code})"
# A crafted file's streams (pypdf decodes up to 75 MB each) must not take the machine's memory.
READER_MEMORY_BYTES = 2_000_000_000
# Characters a text layer may hold that no page shows and PostgreSQL cannot store (NUL), or that break lines.
_UNSHOWN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
# A line that ends a sentence and is shorter than this share of the page's longest line ends its paragraph.
PARAGRAPH_END_WIDTH = 0.8
# A line shorter than this share with no sentence end, before one that starts with a capital, is a heading.
HEADING_WIDTH = 0.6
_SENTENCE_ENDS = (".", "!", "?", ":", '."', ".”", ".)")
_ITEM = re.compile(r"(?:[-–•*▪◦]|\d{1,3}[.)]|\([a-z\d]{1,3}\))\s")  # a list's item starts its own line
_HYPHENATED = re.compile(r"[^\W\d_]-$")
# Logged by pypdf for every odd object of a sloppy but readable PDF; the import reports what matters.
logging.getLogger("pypdf").setLevel(logging.ERROR)


class PdfLeftOut(Exception):
    """A PDF left out on purpose, by a rule of the garden: counted as skipped, with its kind and reason."""

    def __init__(self, message: str, kind: SkipKind) -> None:
        super().__init__(message)
        self.kind = kind


def is_pdf(path: Path | str) -> bool:
    return str(path).lower().endswith(PDF_SUFFIX)


def pdf_place(relative: Path) -> str:
    """A PDF's place in the garden, its suffix kept (`Papers/Hive study.pdf`): its slug and path then differ
    from those of a note named like it (`Papers/Hive study.md`, often the notes on that paper)."""
    return relative.as_posix()


def pdf_hash(data: bytes) -> str:
    """What tells one PDF from another (`ArticleRevision.content_hash`): its bytes."""
    return hashlib.sha256(data).hexdigest()


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size:,} bytes"


def _clean(text: str) -> str:
    return _UNSHOWN.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def _page_text(text: str) -> str:
    """A page's text as paragraphs: a text layer breaks every printed line, mid-sentence, and the sentences
    (which passages, quotes and answers are made of) are whole again only when its lines are joined. A line
    that ends a sentence well short of the page's width ends a paragraph, as does a short line before a
    capital (a heading); a word hyphenated at a line's end
    is joined again; a list's item starts a paragraph of its own."""
    lines = [" ".join(line.split()) for line in _clean(text).split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        return ""
    width = max(len(line) for line in lines)
    paragraphs: list[str] = [lines[0]]
    for before, line in itertools.pairwise(lines):
        short = len(before) < PARAGRAPH_END_WIDTH * width
        heading = len(before) < HEADING_WIDTH * width and line[:1].isupper()
        if (short and before.endswith(_SENTENCE_ENDS)) or heading or _ITEM.match(line):
            paragraphs.append(line)
        elif _HYPHENATED.search(before) and line[:1].islower():
            paragraphs[-1] = paragraphs[-1][:-1] + line
        else:
            paragraphs[-1] += " " + line
    return "\n\n".join(paragraphs)


def _reader(data: bytes) -> PdfReader:
    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ArticleFileError(PDF_ENCRYPTED)  # readers open a PDF protected by an empty password
        return reader
    except ArticleFileError:
        raise
    except FileNotDecryptedError:
        raise ArticleFileError(PDF_ENCRYPTED) from None
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        raise ArticleFileError(PDF_BROKEN.format(error=str(error) or type(error).__name__)) from None
    except Exception as error:  # pypdf on a file it cannot make sense of raises anything (e.g. a missing
        # `cryptography` for AES): the file fails with that reason, the sync goes on
        raise ArticleFileError(PDF_BROKEN.format(error=f"{type(error).__name__}: {error}")) from None


def _title(reader: PdfReader) -> str:
    try:
        metadata = reader.metadata
        title = metadata.title if metadata is not None else None
    except Exception:  # a broken info dictionary names no title; the pages may still read
        title = None
    return " ".join(_clean(str(title)).split()) if title else ""


def _pages(reader: PdfReader, *, max_pages: int) -> list[str]:
    try:
        count = len(reader.pages)
    except Exception as error:
        raise ArticleFileError(PDF_BROKEN.format(error=f"{type(error).__name__}: {error}")) from None
    if count > max_pages:
        raise PdfLeftOut(PDF_TOO_MANY_PAGES.format(pages=count, limit=max_pages), SkipKind.PDF_OVER_CAP)
    texts: list[str] = []
    for number in range(count):
        try:
            texts.append(_page_text(reader.pages[number].extract_text()))
        except Exception as error:
            raise ArticleFileError(
                PDF_BROKEN.format(error=f"page {number + 1}: {type(error).__name__}: {error}")
            ) from None
    return texts


def _text_layer(data: bytes, max_pages: int) -> tuple[str, list[str]]:
    """The PDF's metadata title ("" when none) and its pages' text."""
    reader = _reader(data)
    return _title(reader), _pages(reader, max_pages=max_pages)


def _read_apart(sending: Connection, data: bytes, max_pages: int) -> None:
    """`_text_layer` in a process of its own, its memory bounded; what it found (or why it could not) is sent
    back as plain tuples."""
    resource.setrlimit(resource.RLIMIT_AS, (READER_MEMORY_BYTES, READER_MEMORY_BYTES))
    try:
        sending.send(("read", *_text_layer(data, max_pages)))
    except PdfLeftOut as left_out:
        sending.send(("left out", str(left_out), left_out.kind))
    except ArticleFileError as error:
        sending.send(("failed", str(error)))
    except MemoryError:
        sending.send(("failed", PDF_TOO_BIG_TO_READ.format(limit=_megabytes(READER_MEMORY_BYTES))))


def _text_layer_bounded(data: bytes, *, max_pages: int, max_seconds: float) -> tuple[str, list[str]]:
    """`_text_layer`, read in a child process that is stopped after `max_seconds`. pypdf reads a content
    stream operator by operator in Python (about 7 s a MB here), and a file of a few kB can hold a stream of
    75 MB, compressed: no check between pages bounds one page. The child is forked from a clean server
    process (forkserver), not from this one and its threads and connections."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    receiving, sending = context.Pipe(duplex=False)
    reader = context.Process(target=_read_apart, args=(sending, data, max_pages), daemon=True)
    reader.start()
    sending.close()
    try:
        if not receiving.poll(max_seconds):
            raise ArticleFileError(PDF_TOO_SLOW.format(seconds=max_seconds))
        result = receiving.recv()
    except EOFError:  # the child died without a word: killed for its memory, or crashed in C code
        reader.join(1)
        raise ArticleFileError(PDF_READER_DIED.format(code=reader.exitcode)) from None
    finally:
        if reader.is_alive():
            reader.kill()
        reader.join()
        receiving.close()
    if result[0] == "left out":
        raise PdfLeftOut(result[1], result[2])
    if result[0] == "failed":
        raise ArticleFileError(result[1])
    return result[1], result[2]


def parse_pdf_file(
    path: Path,
    root: Path | None = None,
    *,
    max_bytes: int,
    max_pages: int,
    max_seconds: float,
    imported: Callable[[str, str], str | None] | None = None,
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
                PDF_TOO_LARGE.format(size=_megabytes(status.st_size), limit=_megabytes(max_bytes)),
                SkipKind.PDF_OVER_CAP,
            )
        with path.open("rb") as file:
            data = file.read(max_bytes + 1)
    except OSError as error:
        raise ArticleFileError(CANNOT_READ.format(error=error.strerror or error)) from None
    if len(data) > max_bytes:  # it grew since its size was read
        raise PdfLeftOut(
            PDF_TOO_LARGE.format(size=f"over {_megabytes(max_bytes)}", limit=_megabytes(max_bytes)),
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
    title, texts = _text_layer_bounded(data, max_pages=max_pages, max_seconds=max_seconds)
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
