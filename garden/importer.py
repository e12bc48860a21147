"""Reading one Markdown note as people keep them (Obsidian, Foam, MkDocs or a plain folder).

Front matter is optional. A note's title is its front matter `title`, else its first `# ` heading, else its file
name; its slug comes from its path in the garden, so notes of one name in two folders are two articles. Parsing is
pure: it touches no database. `garden.sync.garden_import` writes what this module reads, and
`garden.links` resolves the links it finds.
"""

from __future__ import annotations

import datetime
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote

import pathspec
import yaml

from garden.gardening import editor_markup_removed, page_properties, without_code

IGNORE_FILE = ".gardenignore"  # gitignore syntax, at the garden's root
# Folders that hold an editor's settings, deleted notes, templates or packages, never notes to publish.
PRIVATE_FOLDERS = frozenset({"templates", "node_modules"})
# Front matter that keeps a note out: publish: false, draft: true, private: true.
PRIVATE_FLAGS = {"publish": False, "draft": True, "private": True}
# `[[target]]`, `[[target#Heading]]`, `[[target#^block-id]]`, `[[target|label]]`.
WIKILINK = re.compile(r"\[\[(?P<target>[^\]|#]+)(?:#(?P<anchor>[^\]|]*))?(?:\|(?P<label>[^\]]+))?\]\]")
# `![[Note]]`, `![[Note#Heading]]`: a note shown inside another (an image embed is an IMAGE_EMBED too).
EMBED = re.compile(r"!\[\[(?P<target>[^\]|#]+)(?:#(?P<anchor>[^\]|]*))?(?:\|[^\]]*)?\]\]")
SLUG = re.compile(r"[^a-z0-9]+")
FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n?---[ \t]*(?:\n|\Z)", re.DOTALL)
HEADING_1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
# `#tag` and nested `#a/b`, not a heading, a URL fragment or a number (`#1` is no tag in Obsidian either).
INLINE_TAG = re.compile(r"(?<![\w#&/(\[])#([\w/-]*[^\W\d_][\w/-]*)")
# `[text](target.md)` and `[text](target.md#heading)`, relative to the note; not images or web addresses.
MARKDOWN_LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(<?([^)<>\s]+?\.md)(#[^)\s>]*)?>?\)", re.IGNORECASE)
# Images a note may show (raster only: an SVG can carry script), and where it names them: `![[hive-plan.png]]`,
# `![a plan](Attachments/plan.png)`.
IMAGES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".bmp"})
_IMAGE_NAME = rf"[^\]|#()<>\n]+\.(?:{'|'.join(sorted(s[1:] for s in IMAGES))})"
# Files a wikilink may embed that are not notes: `![[hive-plan.png]]` is an attachment, not a missing note.
_OTHER_ATTACHMENTS = ("svg", "pdf", "mp3", "mp4", "m4a", "wav", "ogg", "webm", "mov", "canvas", "excalidraw")
ATTACHMENTS = re.compile(
    rf"\.(?:{'|'.join(sorted(s[1:] for s in IMAGES))}|{'|'.join(_OTHER_ATTACHMENTS)})$", re.IGNORECASE
)
IMAGE_EMBED = re.compile(
    rf"!\[\[(?P<target>{_IMAGE_NAME})(?:\|[^\]]*)?\]\]|!\[(?P<alt>[^\]]*)\]\(<?(?P<path>{_IMAGE_NAME})>?\)",
    re.IGNORECASE,
)
DATE_FIELDS = ("date", "updated", "modified", "last_modified", "created")


class ArticleFileError(Exception):
    """A file that cannot be imported; the message says why, in words an editor can act on."""


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


@dataclass(frozen=True)
class ParsedArticle:
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
    private: bool = False  # its front matter keeps it out of the garden (see PRIVATE_FLAGS)
    anchors: dict[str, int] = field(default_factory=dict)  # block id -> offset in body, for `[[Note#^id]]`
    images: tuple[tuple[str, bool], ...] = ()  # (image as written, whether a path from the note) it shows


def slugify(value: str) -> str:
    return SLUG.sub("-", value.lower()).strip("-")


def written_key(target: str) -> str:
    target = unquote(target).strip().replace("\\", "/").lower()
    return target.removesuffix(".md").lstrip("/")


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
    try:
        return datetime.date.fromisoformat(str(value).strip()[:10])
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
            raise ArticleFileError(f"front matter field 'date' is not an ISO date (YYYY-MM-DD): {value!r}")
    return fallback


def _flag(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return True if text in {"true", "yes", "on"} else False if text in {"false", "no", "off"} else None


def _private(meta: dict[str, Any]) -> bool:
    return any(key in meta and _flag(meta[key]) is value for key, value in PRIVATE_FLAGS.items())


def _title(meta: dict[str, Any], prose: str, file_name: str) -> str:
    title = meta.get("title")
    if title is not None and not isinstance(title, str | int | float):
        raise ArticleFileError("front matter field 'title' must be text")
    if title is not None and str(title).strip():
        return str(title).strip()
    heading = HEADING_1.search(prose)
    return heading.group(1).strip() if heading else file_name


def _tags(meta: dict[str, Any], prose: str) -> tuple[str, ...]:
    written = [tag.lstrip("#") for tag in _names(meta, "tags", "tag")]
    written += INLINE_TAG.findall(prose)
    return tuple(dict.fromkeys(tag.strip("/").lower() for tag in written if tag.strip("/")))


def _links(prose: str) -> tuple[WrittenLink, ...]:
    links = [
        WrittenLink(match["target"].strip(), (match["label"] or match["target"]).strip())
        for match in WIKILINK.finditer(prose)
        if match["target"].strip() and not ATTACHMENTS.search(match["target"].strip())
    ]
    links += [
        WrittenLink(target, text.strip() or target, markdown=True)
        for text, target, _ in MARKDOWN_LINK.findall(prose)
        if "://" not in target
    ]
    return tuple(links)


def parse_article_text(
    raw: str,
    *,
    path: str,
    slug: str,
    relative_path: str = "",
    modified: datetime.date | None = None,
) -> ParsedArticle:
    """Parse one note's text. Raises ArticleFileError with the reason when it cannot be imported.

    `slug` is used unless the front matter names one; `relative_path` is the note's place in the garden
    ("Sync/Security and privacy"), whose last part is the title of a note with no other; `modified` is the
    file's modification date, its date when the front matter gives none.
    """
    raw = raw.replace("\r\n", "\n").lstrip("\ufeff")
    meta: dict[str, Any] = {}
    body = raw
    match = FRONT_MATTER.match(raw)
    if match:
        try:
            loaded = yaml.safe_load(match.group(1))
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" at line {mark.line + 2}" if mark is not None else ""
            raise ArticleFileError(f"front matter is not valid YAML{where}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ArticleFileError("front matter must be a mapping of fields (title, tags, ...)")
        meta = loaded or {}
        body = raw[match.end() :]
    properties, body = page_properties(body)
    meta = {**properties, **meta}
    body, anchors = editor_markup_removed(body)
    if _private(meta):
        return ParsedArticle(
            slug=slugify(slug),
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
    if not body.strip():
        raise ArticleFileError("the article has no body")
    file_name = PurePosixPath(relative_path).name if relative_path else PurePosixPath(path).stem
    prose = without_code(body)  # the body, its code blanked out: titles, tags and links are read from prose
    return ParsedArticle(
        slug=slugify(str(meta.get("slug") or slug)),
        title=_title(meta, prose, file_name),
        topics=_string_list(meta, "topics"),
        themes=_string_list(meta, "themes"),
        date=_date(meta, modified),
        body=body,
        path=path,
        content_hash=hashlib.sha256(raw.encode()).hexdigest(),
        links=_links(prose),
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
    )


def parse_article_file(path: Path, root: Path | None = None) -> ParsedArticle:
    """Parse the note at `path`; its slug is its path below `root` (the garden's folder), so that
    `Sync/Security and privacy.md` and `Publish/Security and privacy.md` are two articles."""
    try:
        raw = path.read_bytes().decode("utf-8")
        modified = datetime.datetime.fromtimestamp(path.stat().st_mtime, tz=datetime.UTC).date()
    except UnicodeDecodeError as error:
        raise ArticleFileError(f"not valid UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise ArticleFileError(f"cannot be read: {error.strerror}") from None
    relative = path.relative_to(root) if root is not None and root != path else Path(path.name)
    relative_path = relative.with_suffix("").as_posix()
    return parse_article_text(
        raw, path=str(path), slug=relative_path, relative_path=relative_path, modified=modified
    )


def article_files(folder: Path) -> list[Path]:
    """The notes of a garden folder (recursively): its Markdown files, less what is private by place."""
    return [folder] if folder.is_file() else garden_files(folder, {".md"})


def image_files(folder: Path) -> list[Path]:
    """The images of a garden folder that its notes may show, less what is private by place."""
    return [] if folder.is_file() else garden_files(folder, IMAGES)


@dataclass(frozen=True)
class GardenWalk:
    """What a garden folder holds of the files asked for."""

    files: list[Path]  # to import, sorted
    private: list[Path]  # there, but private by place: never read as notes
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # not read, with the reason


def garden_files(folder: Path, suffixes: set[str] | frozenset[str]) -> list[Path]:
    """The garden's files with these suffixes (any case), less what is private by place."""
    return garden_walk(folder, suffixes).files


def garden_walk(folder: Path, suffixes: set[str] | frozenset[str]) -> GardenWalk:
    """The garden's files with these suffixes (any case), and apart those private by place: files and folders
    whose name starts with '.' (`.obsidian/`, `.trash/`) or '_', the folders in PRIVATE_FOLDERS, and the
    paths that the garden's `.gardenignore` matches (gitignore syntax)."""
    ignore_file = folder / IGNORE_FILE
    ignored = pathspec.GitIgnoreSpec.from_lines(
        ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
        if ignore_file.is_file()
        else []
    )
    notes, private = [], []
    for path in folder.rglob("*"):
        if path.suffix.lower() not in suffixes or not path.is_file():
            continue
        relative = path.relative_to(folder)
        if (
            any(part.startswith(("_", ".")) for part in relative.parts)
            or any(part.lower() in PRIVATE_FOLDERS for part in relative.parts[:-1])
            or ignored.match_file(relative.as_posix())
        ):
            private.append(path)
            continue
        notes.append(path)
    return GardenWalk(sorted(notes), sorted(private))
