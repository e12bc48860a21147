"""Parsing one note: a Markdown file as people keep them (Obsidian, Foam, MkDocs, a Logseq graph or a plain
folder), read into a `ParsedArticle` or refused with an `ArticleFileError` that says why.

Front matter is optional. A note's title is its front matter `title`, else its first `# ` heading (its words,
without link or emphasis marks), else its file name; its slug comes from its path in the garden, so notes of one
name in two folders are two articles. A page of a Logseq graph is read as Logseq shows it (`garden.formats.logseq`): its
title from `title::` or its file name, its slug from its title. Parsing is pure: it touches no database.
Which files of a garden are notes is `garden.walk`'s to say; the marks a note is written with (links, embeds,
headings, code) are read by `text.markup`; `garden.sync.garden_import` writes what this module reads, and
`garden.sync.links` resolves the links it finds.
"""

from __future__ import annotations

import datetime
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

import yaml
from django.conf import settings

from garden.audience_marks import AUDIENCE_KEYS, audience_mark

# A note's file is read as every text format's is (`garden.formats.files`); its messages are read here too.
from garden.formats.files import NOT_UTF8 as NOT_UTF8
from garden.formats.files import NOTE_TOO_LARGE as NOTE_TOO_LARGE
from garden.formats.files import FileByFile, FileByFileFormat, content_hash, note_file_read, note_text
from garden.formats.files import size_text as size_text
from garden.formats.gardening import editor_markup_removed, page_properties

# The note types are every format's (`garden.formats.note`); callers and tests import them from here too.
from garden.formats.note import ArticleFileError as ArticleFileError
from garden.formats.note import ParsedArticle as ParsedArticle
from garden.formats.note import WrittenLink as WrittenLink
from garden.formats.note import article_slug as article_slug
from garden.formats.protocol import GardenFiles, ImportedTitle
from garden.storable import storable
from text.markup import (
    ATTACHMENTS,
    HEADING_1,
    IMAGE_EMBED,
    MARKDOWN_LINK,
    WIKILINK,
    heading_words,
    link_unwrapped,
    slugify,
    without_code,
)

# Front matter or page properties (any case) that keep a note out, with the value that does: `private: true`,
# `public:: false`. A value that is no yes or no (`private: later`) keeps it out too: its writer meant something.
PRIVATE_FLAGS = {"private": True, "draft": True, "publish": False, "published": False, "public": False}
FLAG_WORDS = {
    "true": True,
    "yes": True,
    "on": True,
    "1": True,
    "false": False,
    "no": False,
    "off": False,
    "0": False,
}
NOT_TEXT = "is not text: it holds NUL bytes (a binary file named .md?)"
YAML_BROKEN = "front matter is not valid YAML{where}"
YAML_TOO_DEEP = "front matter is nested too deeply to read"
YAML_BROKEN_PRIVATE = (
    "front matter is not valid YAML{where}, and it marks the note private ({marker}); the note is withheld "
    "until the front matter is fixed"
)
FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n?---[ \t]*(?:\n|\Z)", re.DOTALL)
# Hugo's TOML front matter, between `+++` lines.
TOML_FRONT_MATTER = re.compile(r"\A\+\+\+[ \t]*\n(.*?)\n?\+\+\+[ \t]*(?:\n|\Z)", re.DOTALL)
TOML_BROKEN = "front matter is not valid TOML ({error})"
TOML_BROKEN_PRIVATE = (
    "front matter is not valid TOML ({error}), and it marks the note private ({marker}); the note is withheld "
    "until the front matter is fixed"
)
# `#tag` and nested `#a/b`, not a heading, a URL fragment or a number (`#1` is no tag in Obsidian either).
INLINE_TAG = re.compile(r"(?<![\w#&/(\[])#([\w/-]*[^\W\d_][\w/-]*)")
# Files a `[[link]]` names that are articles of their own: the garden reads a PDF as a note
# (garden.formats.pdf.reading).
ARTICLE_FILES = (".pdf",)
DATE_FIELDS = ("date", "updated", "modified", "last_modified", "created")


def _names(meta: dict[str, Any], *keys: str) -> tuple[str, ...]:
    """A field that is a list of names, or one string of them separated by commas."""
    names: list[str] = []
    for key in keys:
        value = meta.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list) or not all(isinstance(item, str | int | float) for item in value):
            raise ArticleFileError(f"front matter field '{key}' must be a list of names")
        names += [str(item).strip() for item in value if str(item).strip()]
    return tuple(dict.fromkeys(names))


def _string_list(meta: dict[str, Any], key: str) -> tuple[str, ...]:
    return tuple(slug for slug in map(slugify, _names(meta, key)) if slug)


def _as_date(value: object) -> datetime.date | None:
    """A date from YAML: a date, a datetime, an ISO string (a time after it is ignored) or epoch milliseconds
    (Dendron). None when it is none of these."""
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, int) and value > 10**11:
        return datetime.datetime.fromtimestamp(value / 1000, tz=datetime.UTC).date()
    if not isinstance(value, str | int | float):
        return None  # a list or a mapping is no date (and YAML aliases can make one too large to print)
    text = link_unwrapped(str(value))  # a link to a journal page: `[[2025-02-22 Sat]]`
    try:
        return datetime.date.fromisoformat(text[:10])
    except ValueError:
        return None


def _date(meta: dict[str, Any], fallback: datetime.date | None) -> datetime.date | None:
    """The note's date: front matter `date`, else `updated` (or `modified`), else `created`, else `fallback`
    (the file's modification time). A `date` that is not a date is an error; the others are only hints."""
    for key in DATE_FIELDS:
        value = meta.get(key)
        if value is None:
            continue
        date = _as_date(value)
        if date is not None:
            return date
        if key == "date":
            shown = repr(value) if isinstance(value, str | int | float) else f"a {type(value).__name__}"
            raise ArticleFileError(f"front matter field 'date' is not an ISO date (YYYY-MM-DD): {shown}")
    return fallback


def _flag(value: object) -> bool | None:
    """A YAML boolean, 1 or 0, or yes/no/true/false/on/off in any case; None for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | str):
        return FLAG_WORDS.get(str(value).strip().lower())
    return None


def private_marker(meta: dict[Any, Any]) -> str | None:
    """The field that keeps the note out (`Private: 1`), or None when none does."""
    for key, value in meta.items():
        wanted = PRIVATE_FLAGS.get(str(key).strip().lower())
        if wanted is None:
            continue
        flag = _flag(value)
        if flag is None or flag is wanted:
            shown = value if isinstance(value, bool | int | str) else type(value).__name__
            return f"{key}: {shown}"
    return None


def _marker_written(front_matter: str, separator: str = ":") -> str | None:
    """A marker that the front matter's text shows, read line by line as `key: value` (`key = value` in TOML)
    where YAML cannot read it (`title: Pay review: 2025` above `private: true`)."""
    fields: dict[str, str] = {}
    for line in front_matter.split("\n"):
        key, colon, value = line.partition(separator)
        if colon and key.strip().lower() in PRIVATE_FLAGS:
            fields[key.strip()] = value.split(" #")[0].strip().strip("'\"")
    return private_marker(fields)


def _language(meta: dict[Any, Any]) -> str:
    """The language the front matter or page properties name (`lang`, `language`), as written; empty when none."""
    for key in ("lang", "language"):
        value = meta.get(key)
        if value is False:  # YAML reads Norwegian's code, `lang: no`, as false
            return "no"
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _audiences(meta: dict[Any, Any], properties: dict[Any, Any]) -> tuple[str, ...] | None:
    """The audiences the front matter names, else the page properties (`audience::`); None when neither does.
    One written wrongly fails closed: the note is not imported (and withheld), and the sync says why."""
    for fields in (meta, properties):
        if any(isinstance(key, str) and key.strip().lower() in AUDIENCE_KEYS for key in fields):
            mark = audience_mark(fields)
            if mark.error is not None:
                raise ArticleFileError(mark.error)
            return mark.names
    return None


def _written_title(meta: dict[str, Any]) -> str | None:
    title = meta.get("title")
    if title is not None and not isinstance(title, str | int | float):
        raise ArticleFileError("front matter field 'title' must be text")
    return str(title).strip() if title is not None and str(title).strip() else None


def _title(meta: dict[str, Any], prose: str, file_name: str) -> str:
    written = _written_title(meta)
    if written is not None:
        return written
    heading = HEADING_1.search(prose)
    return heading_words(heading.group(1)) if heading else file_name


def _tags(meta: dict[str, Any], prose: str) -> tuple[str, ...]:
    written = [tag.lstrip("#") for tag in _names(meta, "tags", "tag")]
    written += INLINE_TAG.findall(prose)
    return tuple(dict.fromkeys(tag.strip("/").lower() for tag in written if tag.strip("/")))


def _links(prose: str) -> tuple[WrittenLink, ...]:
    links = [
        WrittenLink(match["target"].strip(), (match["label"] or match["target"]).strip())
        for match in WIKILINK.finditer(prose)
        if match["target"].strip()
        and (
            not ATTACHMENTS.search(match["target"].strip())
            or match["target"].strip().lower().endswith(ARTICLE_FILES)
        )
    ]
    links += [
        WrittenLink(target, text.strip() or target, markdown=True)
        for text, target, _ in MARKDOWN_LINK.findall(prose)
        if "://" not in target
    ]
    return tuple(links)


def written_links(text: str) -> tuple[WrittenLink, ...]:
    """The links a note's text writes, outside its code."""
    return _links(without_code(text))


def _toml_front_matter(match: re.Match[str]) -> dict[str, Any]:
    try:
        return tomllib.loads(match.group(1))
    except tomllib.TOMLDecodeError as error:
        marker = _marker_written(match.group(1), "=")
        if marker is not None:
            raise ArticleFileError(
                TOML_BROKEN_PRIVATE.format(error=error, marker=marker), marked_private=True
            ) from None
        raise ArticleFileError(TOML_BROKEN.format(error=error)) from None
    except RecursionError:
        marked = _marker_written(match.group(1), "=") is not None
        raise ArticleFileError(YAML_TOO_DEEP, marked_private=marked) from None


def _front_matter(raw: str) -> tuple[dict[str, Any], str]:
    """The note's front matter (YAML between `---` lines, or Hugo's TOML between `+++` lines) and the text
    after it."""
    toml = TOML_FRONT_MATTER.match(raw)
    if toml:
        return _fields_storable(_toml_front_matter(toml)), raw[toml.end() :]
    match = FRONT_MATTER.match(raw)
    if not match:
        return {}, raw
    try:
        loaded = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        marker = _marker_written(match.group(1))
        if marker is not None:
            raise ArticleFileError(
                YAML_BROKEN_PRIVATE.format(where=where, marker=marker), marked_private=True
            ) from None
        raise ArticleFileError(YAML_BROKEN.format(where=where)) from None
    except RecursionError:  # PyYAML composes nested lists and mappings recursively
        marked = _marker_written(match.group(1)) is not None
        raise ArticleFileError(YAML_TOO_DEEP, marked_private=marked) from None
    if loaded is not None and not isinstance(loaded, dict):
        raise ArticleFileError(
            "front matter must be a mapping of fields (title, tags, ...)",
            marked_private=_marker_written(match.group(1)) is not None,
        )
    return _fields_storable(loaded or {}), raw[match.end() :]


def _fields_storable(meta: dict[Any, Any]) -> dict[Any, Any]:
    """The fields with text PostgreSQL can store: an escape such as YAML's "\\0" writes a NUL, which the
    database refuses, and the whole sync with it (a title goes into the garden's topics)."""

    def storable_value(value: Any) -> Any:
        if isinstance(value, str):
            return storable(value)
        if isinstance(value, list | tuple):
            return [storable(item) if isinstance(item, str) else item for item in value]
        return value

    return {storable(k) if isinstance(k, str) else k: storable_value(v) for k, v in meta.items()}


def parse_article_text(
    raw: str,
    *,
    path: str,
    slug: str,
    relative_path: str = "",
    modified: datetime.date | None = None,
    rules: PageRules | None = None,
) -> ParsedArticle:
    """Parse one note's text. Raises ArticleFileError with the reason when it cannot be imported.

    `slug` is used unless the front matter names one; `relative_path` is the note's place in the garden
    ("Sync/Security and privacy"), whose last part is the title of a note with no other; `modified` is the
    file's modification date, its date when the front matter gives none. A note is private when its front
    matter or its page properties say so (PRIVATE_FLAGS). With an editor's `rules`, the note is a page read as
    the editor shows it (a Logseq graph's page or journal: `garden.formats.logseq.graph.Graph.page_read`).
    """
    if "\x00" in raw:
        raise ArticleFileError(NOT_TEXT)
    raw = note_text(raw)
    meta, body = _front_matter(raw)
    properties, body = page_properties(body)
    place = relative_path or slug
    page = rules.page_read(meta, properties, body, place) if rules is not None else None
    if page is not None:
        slug, body = page.title, page.body
        properties = {**properties, **page.properties}
    if private_marker(meta) or private_marker(properties) or (page is not None and page.hidden):
        return ParsedArticle(
            slug=article_slug(slug, place),
            title="",
            topics=(),
            themes=(),
            date=None,
            body="",
            path=path,
            content_hash="",
            relative_path=relative_path,
            private=True,
        )
    audiences = _audiences(meta, properties)
    meta = {**properties, **meta}
    body, anchors = editor_markup_removed(body)
    if page is not None and not re.search(r"\w", body):
        # A page of properties alone is a page: its description, else its title (with its links, below).
        body, anchors = page.description or page.title, {}
    if not body.strip():
        raise ArticleFileError("the article has no body")
    written_slug = meta.get("slug") or slug
    if not isinstance(written_slug, str | int | float):
        raise ArticleFileError("front matter field 'slug' must be text")
    file_name = PurePosixPath(relative_path).name if relative_path else PurePosixPath(path).stem
    prose = without_code(body)  # the body, its code blanked out: titles, tags and links are read from prose
    return ParsedArticle(
        slug=article_slug(str(written_slug), place),
        title=page.title if page is not None else _title(meta, prose, file_name),
        topics=_string_list(meta, "topics"),
        themes=_string_list(meta, "themes"),
        date=page.date if page is not None and page.date else _date(meta, modified),
        body=body,
        path=path,
        content_hash=content_hash(raw),
        links=_links(prose + (page.linked if page is not None else "")),
        aliases=_names(meta, "aliases", "alias"),
        tags=_tags(meta, prose),
        relative_path=relative_path,
        anchors=anchors,
        images=tuple(
            dict.fromkeys(
                (match["target"], False) if match["target"] else (match["path"], True)
                for match in IMAGE_EMBED.finditer(prose)
            )
        ),
        names=(page.title,) if page is not None else (),
        folder_is_theme=page is None,
        audiences=audiences,
        language=_language(meta),
    )


@dataclass(frozen=True)
class EditorPage:
    """A note as an editor with rules of its own shows it (a page of a Logseq graph: `PageRules`)."""

    title: str
    body: str  # as the editor shows it, its description first
    properties: dict[str, Any]  # its page properties as this module reads them (lists of names, dates)
    description: str
    date: datetime.date | None  # a journal's
    linked: str  # `[[links]]` its properties make (tags, type), to be read as its links
    hidden: bool  # the editor leaves it out of the garden


class PageRules(Protocol):
    """How an editor with rules of its own reads a note's text into a page (`garden.formats.logseq.graph.Graph`)."""

    def page_read(
        self, meta: dict[str, Any], properties: dict[str, Any], body: str, place: str
    ) -> EditorPage: ...


def parse_article_file(
    path: Path,
    root: Path | None = None,
    *,
    max_bytes: int | None = None,
    rules: PageRules | None = None,
) -> ParsedArticle:
    """Parse the note at `path`; its slug is its path below `root` (the garden's folder), so that
    `Sync/Security and privacy.md` and `Publish/Security and privacy.md` are two articles. A note larger than
    `max_bytes` is not read: its size is known (stat) before any of it is."""
    raw, modified = note_file_read(path, max_bytes)
    inside = root is not None and root != path and path.is_relative_to(root)
    relative = path.relative_to(root) if root is not None and inside else Path(path.name)
    relative_path = relative.with_suffix("").as_posix()
    return parse_article_text(
        raw,
        path=str(path),
        slug=relative_path,
        relative_path=relative_path,
        modified=modified,
        rules=rules if inside else None,
    )


# Hugo's page of a section (`content/posts/_index.md`): published like any page, though its name starts with '_'.
HUGO_SECTION_PAGE = "_index.md"
MARKDOWN_SUFFIX = ".md"


class MarkdownContext(FileByFile):
    """Markdown notes in a garden: each read on its own, so each may be read again to be written."""

    suffixes = frozenset({MARKDOWN_SUFFIX})

    def parse(self, path: Path, root: Path | None) -> ParsedArticle:
        return parse_article_file(path, root=root, max_bytes=settings.GARDEN_NOTE_MAX_BYTES)


class MarkdownFormat(FileByFileFormat):
    """Markdown notes, with the conventions of Obsidian, Foam, Dendron, MkDocs and Hugo (see this module)."""

    name = "markdown"
    suffixes = frozenset({MARKDOWN_SUFFIX})

    def public_place(self, relative: PurePosixPath) -> bool:
        return relative.name == HUGO_SECTION_PAGE

    def opened(
        self, root: Path | None, imported: ImportedTitle | None, files: GardenFiles | None
    ) -> MarkdownContext:
        return MarkdownContext()


FORMAT = MarkdownFormat()
