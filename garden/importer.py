"""Reading a folder of Markdown articles: front matter, body, wikilinks and the garden's topic/theme file.

Parsing is pure: it touches no database. `garden.services.garden_import` writes what this module reads.
"""

from __future__ import annotations

import datetime
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

GARDEN_FILE = "_garden.yaml"
WIKILINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]")
SLUG = re.compile(r"[^a-z0-9]+")
FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)


class ArticleFileError(Exception):
    """A file that cannot be imported; the message says why, in words an editor can act on."""


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
    links: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Vocabulary:
    """Topics and themes defined in a garden's `_garden.yaml`."""

    topics: dict[str, dict[str, Any]] = field(default_factory=dict)
    themes: dict[str, dict[str, Any]] = field(default_factory=dict)


def slugify(value: str) -> str:
    return SLUG.sub("-", value.lower()).strip("-")


def _string_list(meta: dict[str, Any], key: str) -> tuple[str, ...]:
    value = meta.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str | int) for item in value):
        raise ArticleFileError(f"front matter field '{key}' must be a list of names")
    return tuple(slugify(str(item)) for item in value if slugify(str(item)))


def _date(meta: dict[str, Any]) -> datetime.date | None:
    value = meta.get("date")
    if value is None or isinstance(value, datetime.date):
        return value.date() if isinstance(value, datetime.datetime) else value
    try:
        return datetime.date.fromisoformat(str(value))
    except ValueError:
        raise ArticleFileError(
            f"front matter field 'date' is not an ISO date (YYYY-MM-DD): {value!r}"
        ) from None


def parse_article_text(raw: str, *, path: str, slug: str) -> ParsedArticle:
    """Parse one article's text. Raises ArticleFileError with the reason when it cannot be imported."""
    raw = raw.replace("\r\n", "\n").lstrip("\ufeff")
    match = FRONT_MATTER.match(raw)
    if not match:
        raise ArticleFileError("no YAML front matter (the file must start with a '---' block)")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise ArticleFileError(f"front matter is not valid YAML{where}") from None
    if not isinstance(meta, dict):
        raise ArticleFileError("front matter must be a mapping of fields (title, topics, ...)")
    title = meta.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ArticleFileError("front matter has no 'title'")
    body = raw[match.end() :].strip("\n")
    if not body.strip():
        raise ArticleFileError("the article has no body")
    links = tuple(
        dict.fromkeys((slugify(target), (text or target).strip()) for target, text in WIKILINK.findall(body))
    )
    return ParsedArticle(
        slug=slugify(str(meta.get("slug") or slug)),
        title=title.strip(),
        topics=_string_list(meta, "topics"),
        themes=_string_list(meta, "themes"),
        date=_date(meta),
        body=body,
        path=path,
        content_hash=hashlib.sha256(raw.encode()).hexdigest(),
        links=links,
    )


def parse_article_file(path: Path) -> ParsedArticle:
    try:
        raw = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise ArticleFileError(f"not valid UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise ArticleFileError(f"cannot be read: {error.strerror}") from None
    return parse_article_text(raw, path=str(path), slug=path.stem)


def article_files(folder: Path) -> list[Path]:
    """The Markdown articles in a folder (recursively), skipping files whose name starts with '_' or '.'."""
    if folder.is_file():
        return [folder]
    return sorted(
        path
        for path in folder.rglob("*.md")
        if not any(part.startswith(("_", ".")) for part in path.relative_to(folder).parts)
    )


def read_vocabulary(folder: Path) -> Vocabulary:
    """Topic titles and aliases, theme titles and keywords, from the folder's `_garden.yaml` if it has one."""
    path = folder / GARDEN_FILE
    if not path.is_file():
        return Vocabulary()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise ArticleFileError(f"{path}: not valid YAML ({error.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise ArticleFileError(f"{path}: must be a mapping with 'topics' and 'themes'")
    return Vocabulary(topics=dict(data.get("topics") or {}), themes=dict(data.get("themes") or {}))
