"""The note every format reads a file into (`ParsedArticle`), the links it writes (`WrittenLink`), the failure
a file that cannot be imported raises (`ArticleFileError`) and the rule for a note's slug (`article_slug`): shared
by every format of `garden.formats` and by the stages after them (the sync, the topics), so that none of those
imports a format to name a note.
"""

from __future__ import annotations

import datetime
import hashlib
from dataclasses import dataclass, field

from text.markup import slugify, written_key

SLUG_MAX_CHARS = 200  # Article.slug's column; a longer slug is cut and told apart by a hash of the whole


class ArticleFileError(Exception):
    """A file that cannot be imported; the message says why, in words an editor can act on. `marked_private`:
    what could be read of it says the note is private."""

    def __init__(self, message: str, *, marked_private: bool = False) -> None:
        super().__init__(message)
        self.marked_private = marked_private


@dataclass(frozen=True)
class WrittenLink:
    """A link as the note writes it: `[[target|text]]` (wiki) or `[text](target.md)` (markdown)."""

    target: str  # as written, without its `#heading` or `#^block`
    text: str
    markdown: bool = False

    @property
    def key(self) -> str:
        """How the page finds this link again: case and `.md` do not matter, `%20` is a space."""
        return written_key(self.target)


# A stretch of a note's body that holds another note's words: (start, end, where that note lives). A stretch
# may hold a shorter one (a block quoting a block), each with the place of its own words.
Borrowed = tuple[int, int, str]


@dataclass(frozen=True, slots=True)  # a garden holds one a note while it imports: no __dict__ each
class ParsedArticle:
    """A note as a format read it: the one note type of every format (decision 0004). Each field is read by a
    stage every format shares (writing, linking, cutting passages, topics); what only a format needs across a garden
    stays in its context. The last four say what shape a note has, whichever format gives it that shape."""

    slug: str
    title: str
    topics: tuple[str, ...]
    themes: tuple[str, ...]
    date: datetime.date | None
    body: str
    path: str
    content_hash: str
    links: tuple[WrittenLink, ...] = ()
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    relative_path: str = ""  # within the garden, without `.md`: "Sync/Security and privacy"
    private: bool = False  # its front matter or page properties keep it out of the garden (see PRIVATE_FLAGS)
    anchors: dict[str, int] = field(default_factory=dict)  # block id -> offset in body, for `[[Note#^id]]`
    images: tuple[tuple[str, bool], ...] = ()  # (image as written, whether a path from the note) it shows
    # Where each page starts in body, for a paged note (a PDF): passages never run across two, and cite theirs.
    pages: tuple[int, ...] = ()
    # Other names a `[[link]]` and the topics give it than its file's: its title, where notes are named by
    # title (a Logseq page, an org-roam note).
    names: tuple[str, ...] = ()
    # The stretches of its body that hold another note's words (Logseq's block references): each is readable
    # only by readers of the note it comes from (decision 0006).
    borrowed: tuple[Borrowed, ...] = ()
    # Its top folder is a theme; a folder of the format's own (Logseq's `pages/`, `journals/`) is not.
    folder_is_theme: bool = True
    # The audiences it names (front matter, else page properties: `garden.audience_marks`); None when it names
    # none, and a folder rule of the garden may (`garden.sync.access`).
    audiences: tuple[str, ...] | None = None
    # The language it names (front matter `lang:` or `language:`, Logseq's `lang::`, Org's `#+LANGUAGE:`), as
    # written; empty when it names none (`garden.languages.note_language` decides).
    language: str = ""

    @property
    def shows(self) -> tuple[str, ...]:
        """Where the notes live whose words its body holds: withheld with any of them."""
        return tuple(sorted({place for _, _, place in self.borrowed}))


def article_slug(written: str, place: str) -> str:
    """The slug of the note at `place` (its path in the garden) whose slug is written as `written`: never empty
    (a name of emoji or punctuation only is `note-` and a hash of its place) and never longer than its column."""
    slug = slugify(written)
    if not slug:
        return f"note-{hashlib.sha256(place.encode()).hexdigest()[:8]}"
    if len(slug) > SLUG_MAX_CHARS:
        return f"{slug[: SLUG_MAX_CHARS - 9].rstrip('-')}-{hashlib.sha256(slug.encode()).hexdigest()[:8]}"
    return slug
