"""Why a file of a garden was left out on purpose (`SkipKind`), and how a count of them reads: what a walk and an
import find (`garden.walk`, `garden.sync`) and what the logs page shows of a sync (`garden.models.Sync`). Imports
nothing of the project, so the models show a sync without importing the walk or the formats.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class SkipKind(StrEnum):
    """Why a file was left out on purpose: an import counts these in its summary and still succeeds. A file
    not read for any other reason (unreadable, a name that is not UTF-8) is a failure: it should have been
    imported and could not be."""

    PRIVATE = "private"  # in a private place (a dot- or underscore-name, a private folder, .gardenignore)
    MARKED_PRIVATE = "marked private"  # read, and marked private, draft, unpublished or not public
    LINK_OUTSIDE = "link outside the garden"
    LINK_PRIVATE = "link into a private place"
    LINK_DANGLING = "dangling link"
    LINK_LOOP = "link loop"
    LINK_SECOND_WAY = "second link to a note"
    LINK_FOLDER = "link to a folder"
    NOT_A_FILE = "special file"
    SCANNED_PDF = "scanned PDF"
    PDF_OVER_CAP = "PDF over the caps"


# How a count of each kind reads: (one, many).
SKIP_LABELS: dict[SkipKind, tuple[str, str]] = {
    SkipKind.PRIVATE: ("in a private place", "in private places"),
    SkipKind.MARKED_PRIVATE: ("marked private", "marked private"),
    SkipKind.LINK_OUTSIDE: ("link outside the garden", "links outside the garden"),
    SkipKind.LINK_PRIVATE: ("link into a private place", "links into private places"),
    SkipKind.LINK_DANGLING: ("dangling link", "dangling links"),
    SkipKind.LINK_LOOP: ("link loop", "link loops"),
    SkipKind.LINK_SECOND_WAY: ("second link to a note", "second links to notes"),
    SkipKind.LINK_FOLDER: ("link to a folder", "links to folders"),
    SkipKind.NOT_A_FILE: ("special file", "special files"),
    SkipKind.SCANNED_PDF: ("scanned PDF", "scanned PDFs"),
    SkipKind.PDF_OVER_CAP: ("PDF over the caps", "PDFs over the caps"),
}


def skipped_words(counts: Iterable[tuple[str, int]]) -> str:
    """Files left out on purpose, from (kind, count), most first: "6 in private places, 1 scanned PDF"."""
    return ", ".join(
        f"{count} {SKIP_LABELS[SkipKind(kind)][count != 1]}"
        for kind, count in sorted(counts, key=lambda item: (-item[1], item[0]))
        if count
    )
