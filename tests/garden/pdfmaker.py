"""PDFs for tests, written with pypdf: pages with a text layer (Helvetica, one `Tj` a line, wrapped as a word
processor wraps them), pages without one (a scan), a metadata title, a password."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from io import BytesIO
from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

LINE_CHARS = 80  # a printed page's line: sentences run across lines, as in real PDFs
SCANNED = None  # a page with no text layer


def _content(paragraphs: Sequence[str]) -> bytes:
    operations = ["BT", "/F1 11 Tf", "14 TL", "72 740 Td"]
    for paragraph in paragraphs:
        for line in textwrap.wrap(paragraph, LINE_CHARS):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            operations.append(f"({escaped}) Tj T*")
        operations.append("T*")  # a blank line between paragraphs
    operations.append("ET")
    return "\n".join(operations).encode("latin-1")


def pdf_bytes(
    pages: Sequence[Sequence[str] | None], *, title: str | None = None, password: str | None = None
) -> bytes:
    """A PDF of `pages`, each a list of paragraphs, or SCANNED for a page with no text layer."""
    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for paragraphs in pages:
        page = writer.add_blank_page(612, 792)
        if paragraphs is None:
            continue
        stream = DecodedStreamObject()
        stream.set_data(_content(paragraphs))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    if title is not None:
        writer.add_metadata({"/Title": title})
    if password is not None:
        writer.encrypt(user_password=password, algorithm="RC4-128")
    out = BytesIO()
    writer.write(out)
    return out.getvalue()


def pdf_write(path: Path, pages: Sequence[Sequence[str] | None], **options: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pdf_bytes(pages, **options))
    return path
