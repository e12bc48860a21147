"""Reading an Org file of the garden as a note, and the Org format as the registry knows it.

An Org file is read as the Markdown note it exports to (`garden.formats.org.markup`), with the front matter its
keywords and file properties give: its title from `#+TITLE:` (else its first heading, else its file name), its
tags from `#+FILETAGS:` and its headings' tags, its aliases from org-roam's `:ROAM_ALIASES:` (or `#+ROAM_ALIAS:`),
its date from `#+DATE:` (else `:CREATED:` or the file's modification time); a link may name it by its title, as
org-roam's do. It is then read as every Markdown note is (`garden.formats.markdown.parse_article_text`), so
links, tags, headings and passages are the garden's own; its `content_hash` is its Org text's.

A note is private as a Markdown note is, in Org's words: `#+FILETAGS: :private:` or `:noexport:`, or a keyword or
file property `PRIVATE: t`, `DRAFT: t`, `PUBLISH: nil`, `PUBLIC: nil` (or any of Markdown's yes and no, and
ox-hugo's `HUGO_DRAFT`); a value that is neither keeps it out too. A subtree is left out by the same marks on its
heading (`markup.PRIVATE_TAGS`, its property drawer). A file that cannot be read fails, with its reason.

`[[id:...]]` links name org-roam's ids: the Org context reads the ids of the garden's Org files once a sync, when
the first note needs them.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings

from garden.audience_marks import AUDIENCE_KEYS
from garden.formats import markdown
from garden.formats.files import FileByFile, FileByFileFormat, content_hash, note_file_read, note_text
from garden.formats.markdown import DATE_FIELDS, parse_article_text
from garden.formats.note import ArticleFileError, ParsedArticle
from garden.formats.org.markup import PRIVATE_TAGS, OrgDocument, org_document, tags_written
from garden.formats.protocol import GardenFiles, ImportedTitle

ORG_SUFFIX = ".org"
ORG_NOT_TEXT = "is not text: it holds NUL bytes (a binary file named .org?)"
# Org's own yes and no (`t`, `nil`), read as Markdown's; ox-hugo's draft keywords are drafts.
ORG_FLAG_WORDS = {"t": "true", "nil": "false"}
ORG_PRIVATE_KEYS = {"hugo_draft": "draft", "export_hugo_draft": "draft"}
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# org-roam's aliases: words, or "several words" in double quotes.
_ALIAS = re.compile(r'"([^"]*+)"|(\S++)')


def private_marker(fields: dict[str, str]) -> str | None:
    """The keyword or property that keeps a note or subtree out (`PRIVATE: t`), or None."""
    flags = {
        ORG_PRIVATE_KEYS.get(key.lower(), key): ORG_FLAG_WORDS.get(value.strip().lower(), value)
        for key, value in fields.items()
    }
    return markdown.private_marker(flags)


def _aliases(document: OrgDocument) -> list[str]:
    written = " ".join(
        value
        for value in (document.properties.get("roam_aliases"), document.keywords.get("roam_alias"))
        if value
    )
    return [(quoted or word).strip() for quoted, word in _ALIAS.findall(written) if (quoted or word).strip()]


def _front_matter(document: OrgDocument) -> dict[str, Any]:
    """The front matter a Markdown note with this Org file's keywords and file properties would have."""
    fields = {**document.properties, **document.keywords}
    meta: dict[str, Any] = {}
    title = document.keywords.get("title", "").strip()
    if title:
        meta["title"] = title
    tags = [tag for tag in document.tags if tag.lower() not in PRIVATE_TAGS]
    if tags:
        meta["tags"] = list(dict.fromkeys(tags))
    aliases = _aliases(document)
    if aliases:
        meta["aliases"] = aliases
    for key in DATE_FIELDS:  # Org's dates are written many ways; one that holds no ISO date is no date
        written = _ISO_DATE.search(fields.get(key, ""))
        if written:
            meta[key] = written.group(0)
    for key in AUDIENCE_KEYS:  # `#+AUDIENCE: hr` or a file property, read as Markdown's `audience:` is
        if key in fields:
            meta[key] = fields[key]
    if fields.get("language", "").strip():  # `#+LANGUAGE: de`, as Org's exporters read it
        meta["lang"] = fields["language"].strip()
    marked = private_marker({**document.hidden_keywords, **fields})
    written_tags = (document.keywords.get("filetags", ""), document.hidden_keywords.get("filetags", ""))
    filetags = {tag.lower() for tags in written_tags for tag in tags_written(tags)}
    if marked or PRIVATE_TAGS & filetags:
        meta["private"] = True
    return meta


def parse_org_text(
    raw: str,
    *,
    path: str,
    place: str,
    modified: datetime.date | None = None,
    ids: dict[str, str] | None = None,
) -> ParsedArticle:
    """Parse one Org file's text, the note at `place` (its path in the garden, without `.org`). `ids` maps
    org-roam ids to the notes (and `#headings`) holding them. Raises ArticleFileError when it cannot be imported."""
    if "\x00" in raw:
        raise ArticleFileError(ORG_NOT_TEXT)
    text = note_text(raw)
    known = ids or {}
    document = org_document(
        text, place=place, resolve_id=known.get, private=lambda fields: private_marker(fields) is not None
    )
    own = {heading_id: f"{place}#{title}" for heading_id, title in document.heading_ids.items()}
    own |= dict.fromkeys(document.file_ids, place)
    if any(key not in known for key in own):  # a note's own ids, in a single file too
        document = org_document(
            text,
            place=place,
            resolve_id=lambda key: known.get(key) or own.get(key),
            private=lambda fields: private_marker(fields) is not None,
        )
    meta = _front_matter(document)
    front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=2**31) if meta else ""
    note = parse_article_text(
        f"---\n{front}---\n{document.body}" if front else document.body,
        path=path,
        slug=place,
        relative_path=place,
        modified=modified,
    )
    if note.private:
        return note
    # An org-roam note is named by its title (its file's name is often a timestamp): `[[Hive care]]` finds it.
    names = (note.title,) if "title" in meta else ()
    return replace(note, content_hash=content_hash(raw), names=names)


def org_place(path: Path, root: Path | None) -> str:
    """Where the Org file at `path` lives in the garden at `root`: its path below it, without `.org`."""
    inside = root is not None and root != path and path.is_relative_to(root)
    relative = path.relative_to(root) if root is not None and inside else Path(path.name)
    return relative.with_suffix("").as_posix()


def parse_org_file(
    path: Path, root: Path | None = None, *, max_bytes: int | None = None, ids: dict[str, str] | None = None
) -> ParsedArticle:
    """Parse the Org file at `path`, its place its path below `root` (the garden's folder)."""
    raw, modified = note_file_read(path, max_bytes)
    return parse_org_text(raw, path=str(path), place=org_place(path, root), modified=modified, ids=ids)


def garden_ids(root: Path, files: GardenFiles, max_bytes: int | None) -> dict[str, str]:
    """The org-roam ids of the garden's Org files (those its walk, `files`, imports): each to the note holding it,
    or to `note#Heading` for a heading's. A file that cannot be read, or is private, gives none."""
    ids: dict[str, str] = {}
    for path in files(frozenset({ORG_SUFFIX})):
        try:
            raw, _ = note_file_read(path, max_bytes)
        except ArticleFileError:
            continue
        place = org_place(path, root)
        document = org_document(
            note_text(raw),
            place=place,
            resolve_id=lambda _: None,
            private=lambda fields: private_marker(fields) is not None,
        )
        if _front_matter(document).get("private"):
            continue
        for heading_id, title in document.heading_ids.items():
            ids.setdefault(heading_id, f"{place}#{title}")
        for file_id in document.file_ids:
            ids.setdefault(file_id, place)
    return ids


class OrgContext(FileByFile):
    """A garden's Org files for one sync: its ids read once, when a note first needs them."""

    suffixes = frozenset({ORG_SUFFIX})

    def __init__(self, root: Path | None, files: GardenFiles | None) -> None:
        super().__init__()
        self.root = root
        self.files = files
        self._ids: dict[str, str] | None = None

    def parse(self, path: Path, root: Path | None) -> ParsedArticle:
        max_bytes = settings.GARDEN_NOTE_MAX_BYTES
        if self._ids is None:
            garden, walked = self.root, self.files
            self._ids = (
                garden_ids(garden, walked, max_bytes) if garden is not None and walked is not None else {}
            )
        return parse_org_file(path, root=root, max_bytes=max_bytes, ids=self._ids)


class OrgFormat(FileByFileFormat):
    """Org-mode files (Emacs Org, org-roam), read as the Markdown notes they export to."""

    name = "org"
    suffixes = frozenset({ORG_SUFFIX})

    def opened(
        self, root: Path | None, imported: ImportedTitle | None, files: GardenFiles | None
    ) -> OrgContext:
        return OrgContext(root, files)


FORMAT = OrgFormat()
