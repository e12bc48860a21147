"""A PDF's text layer, page by page (pypdf), read in a process of its own:
`python -m garden.formats.pdf.text_layer MAX_PAGES` reads the PDF's bytes on stdin and writes what it found as
JSON on stdout. `garden.formats.pdf.reading` runs it and stops it when it takes too long; it imports nothing but
pypdf, so it starts in a few tens of milliseconds.

The JSON is one of: `{"title": str, "pages": [str, ...]}`; `{"encrypted": true}`; `{"broken": "why"}`;
`{"page_count": n}` (more pages than MAX_PAGES: none was read); `{"memory": bytes}` (more memory needed than
the child may take).
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import resource
import sys
from io import BytesIO
from typing import Any

from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError

# A crafted file's streams (pypdf decodes up to 75 MB each) must not take the machine's memory.
MEMORY_BYTES = 2_000_000_000
# Characters a text layer may hold that no page shows and PostgreSQL cannot store (NUL, lone surrogates from a
# broken font map), or that break lines.
_UNSHOWN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
# A line that ends a sentence and is shorter than this share of the page's longest line ends its paragraph.
PARAGRAPH_END_WIDTH = 0.8
# A line shorter than this share with no sentence end, before one that starts with a capital, is a heading.
HEADING_WIDTH = 0.6
_SENTENCE_ENDS = (".", "!", "?", ":", '."', ".”", ".)")
_ITEM = re.compile(r"(?:[-–•*▪◦]|\d{1,3}[.)]|\([a-z\d]{1,3}\))\s")  # a list's item starts its own line
_HYPHENATED = re.compile(r"[^\W\d_]-$")


class Unreadable(Exception):
    """What the reader says instead of a text layer (see the module's JSON shapes)."""

    def __init__(self, said: dict[str, Any]) -> None:
        super().__init__(said)
        self.said = said


def _clean(text: str) -> str:
    return _UNSHOWN.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def page_text(text: str) -> str:
    """A page's text as paragraphs: a text layer breaks every printed line, mid-sentence, and the sentences
    (which passages, quotes and answers are made of) are whole again only when its lines are joined. A line
    that ends a sentence well short of the page's width ends a paragraph, as does a short line before a
    capital (a heading); a word hyphenated at a line's end is joined again; a list's item starts a paragraph
    of its own."""
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


def _broken(error: BaseException, where: str = "") -> Unreadable:
    return Unreadable({"broken": f"{where}{type(error).__name__}: {error}".strip()})


def _reader(data: bytes) -> PdfReader:
    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(
            ""
        ):  # readers open a PDF protected by an empty password
            raise Unreadable({"encrypted": True})
        return reader
    except FileNotDecryptedError:
        raise Unreadable({"encrypted": True}) from None
    except (Unreadable, MemoryError):
        raise
    except Exception as error:  # pypdf on a file it cannot make sense of raises anything
        raise _broken(error) from None


def _title(reader: PdfReader) -> str:
    try:
        metadata = reader.metadata
        title = metadata.title if metadata is not None else None
    except Exception:  # a broken info dictionary names no title; the pages may still read
        title = None
    return " ".join(_clean(str(title)).split()) if title else ""


def text_layer(data: bytes, max_pages: int) -> tuple[str, list[str]]:
    """The PDF's metadata title ("" when none) and its pages' text; Unreadable says why not. The page count is
    known before any page is read."""
    reader = _reader(data)
    try:
        count = len(reader.pages)
    except Exception as error:
        raise _broken(error) from None
    if count > max_pages:
        raise Unreadable({"page_count": count})
    texts: list[str] = []
    for number in range(count):
        try:
            texts.append(page_text(reader.pages[number].extract_text()))
        except MemoryError:
            raise
        except Exception as error:
            raise _broken(error, f"page {number + 1}: ") from None
    return _title(reader), texts


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)  # what matters is in the JSON
    try:
        title, pages = text_layer(sys.stdin.buffer.read(), int(sys.argv[1]))
        said: dict[str, Any] = {"title": title, "pages": pages}
    except Unreadable as unreadable:
        said = unreadable.said
    except MemoryError:
        said = {"memory": MEMORY_BYTES}
    sys.stdout.write(json.dumps(said))


if __name__ == "__main__":
    main()
