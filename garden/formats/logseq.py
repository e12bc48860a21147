"""Logseq graphs read as Logseq shows them.

A folder is a graph when it has `logseq/config.edn` (or both `pages/` and `journals/`). Its `config.edn` is read
by a small EDN reader for the few keys used here; anything odd in it leaves Logseq's defaults in place and is
told (`Graph.problem`), never failing an import. A page's title is its `title::`, else its file name decoded in
the graph's file name format; a journal's is its date in the graph's title format. Block references
(`((uuid))`, `{{embed ((uuid))}}`) are resolved across the graph into the page's stored text, so readers,
retrieval and the judge see the block's words; `{{embed [[page]]}}` becomes an embed (`![[page]]`); other macros
are left as words, never braces. Pure: no database.
"""

from __future__ import annotations

import calendar
import datetime
import hashlib
import itertools
import logging
import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote

from django.conf import settings

from garden.formats import markdown
from garden.formats.gardening import editor_markup_removed
from garden.formats.markdown import (
    DATE_FIELDS,
    MARKDOWN_SUFFIX,
    EditorPage,
    parse_article_file,
    written_links,
)
from garden.formats.note import Borrowed, ParsedArticle, WrittenLink, article_slug
from garden.formats.protocol import GardenFiles, ImportedTitle
from text.markup import link_unwrapped

logger = logging.getLogger(__name__)

CONFIG = "logseq/config.edn"
STORAGE_FOLDERS = ("pages", "journals")  # where Logseq keeps files: no part of a page's name or address
# Journal titles when config.edn names no format: ISO dates, which read alike in every language (Logseq's own
# default config.edn names one, "MMM do, yyyy", and a graph that keeps it gets Logseq's titles).
DEFAULT_TITLE_FORMAT = "yyyy-MM-dd"
DEFAULT_JOURNAL_FILE_FORMAT = "yyyy_MM_dd"
TRIPLE_LOWBAR = "triple-lowbar"
LEGACY = "legacy"
CONFIG_NOT_READ = "could not be read whole ({reason}); Logseq's defaults stand for what could not be read"
CONFIG_UNKNOWN_FORMAT = "{key} {value!r} is not a date format this import knows; ISO dates are used"
DUPLICATE_TITLE = (
    "duplicate title: {paths} claim one title, '{title}' (Logseq keeps one page per title); only {kept} was "
    "imported"
)
BLOCK_NOT_SHOWN = "(a block not in the garden)"  # a reference to a block of a private, missing or failed page
MACRO_NOT_SHOWN = "({name} shown in Logseq only)"
EDN_MAX_DEPTH = 64  # a config nested deeper is not Logseq's and would only exhaust the reader
CONFIG_MAX_BYTES = 1_000_000  # Logseq's own config.edn is some 20 KB; a larger one is not read
CONFIG_TOO_LARGE = "is over {limit:,} bytes, so it was not read; Logseq's defaults stand"
# Lines of a block (its own and those under it) that a reference or an embed shows at most: an embed of a
# page's first block would otherwise copy the whole page, and a chain of nested blocks the square of it.
BLOCK_LINES_MAX = 50


class EdnError(ValueError):
    """Text the small EDN reader cannot read."""


_EDN_TOKEN = re.compile(
    r"""[\s,]+|;[^\n]*|"(?:[^"\\]|\\.)*+"|\#"(?:[^"\\]|\\.)*+"|\#_|\#\{|[\[\]{}()]|[^\s,;\[\]{}()"]+""",
    re.DOTALL,
)
_CLOSE = {"[": "]", "(": ")", "{": "}", "#{": "}"}


def edn_read(text: str) -> Any:
    """The first form of an EDN text as Python: maps are dicts (keys that are collections are left out),
    vectors, lists and sets are lists, keywords are strings with their colon (`:file/name-format`), strings
    are strings, numbers, `true`, `false` and `nil` their values, tagged literals their value. EdnError
    when the text is not EDN."""
    tokens = [
        token for token in _EDN_TOKEN.findall(text) if token.strip(" \t\r\n,") and not token.startswith(";")
    ]
    if "".join(_EDN_TOKEN.findall(text)) != text:
        raise EdnError("characters that are not EDN")
    position = 0

    def form(depth: int) -> Any:
        nonlocal position
        if depth > EDN_MAX_DEPTH:
            raise EdnError("nested too deeply")
        if position >= len(tokens):
            raise EdnError("it ends inside a form")
        token = tokens[position]
        position += 1
        if token == "#_":
            form(depth + 1)
            return form(depth)
        if token in _CLOSE:
            items: list[Any] = []
            while position < len(tokens) and tokens[position] != _CLOSE[token]:
                if tokens[position] == "#_":
                    position += 1
                    form(depth + 1)
                    continue
                items.append(form(depth + 1))
            if position >= len(tokens):
                raise EdnError(f"a '{token}' is never closed")
            position += 1
            if token != "{":
                return items
            if len(items) % 2:
                raise EdnError("a map has a key without a value")
            pairs = zip(items[::2], items[1::2], strict=True)
            return {key: value for key, value in pairs if isinstance(key, str | int | float | bool)}
        if token in ")]}":
            raise EdnError(f"an unexpected '{token}'")
        if token.startswith('"'):
            return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), token[1:-1])
        if token.startswith("#") and not token.startswith('#"'):
            return form(depth + 1)  # a tagged literal (`#inst "..."`): its value
        return {"true": True, "false": False, "nil": None}.get(token, _number(token))

    return form(0)


def _number(token: str) -> Any:
    try:
        return int(token)
    except ValueError:
        try:
            return float(token)
        except ValueError:
            return token


_MONTHS = [calendar.month_name[i] for i in range(1, 13)]
_DAYS = [calendar.day_name[i] for i in range(7)]
_DATE_TOKEN = re.compile(r"'[^']*'|yyyy|yy|MMMM|MMM|MM|M|do|dd|d|EEEE|EEE|EE|E|[A-Za-z]|.", re.DOTALL)
_KNOWN_TOKENS = {"yyyy", "yy", "MMMM", "MMM", "MM", "M", "do", "dd", "d", "EEEE", "EEE", "EE", "E"}


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def date_format_known(pattern: str) -> bool:
    """Whether `pattern` (date-fns tokens, as Logseq writes them) holds only tokens this module knows."""
    tokens = _DATE_TOKEN.findall(pattern)
    return any(t in _KNOWN_TOKENS for t in tokens) and not any(
        t.isalpha() and t not in _KNOWN_TOKENS for t in tokens
    )


def date_formatted(date: datetime.date, pattern: str) -> str:
    """`date` written in `pattern` (`MMM do, yyyy` is `Jul 19th, 2021`), English names as Logseq's default."""
    shown = {
        "yyyy": f"{date.year:04d}",
        "yy": f"{date.year % 100:02d}",
        "MMMM": _MONTHS[date.month - 1],
        "MMM": _MONTHS[date.month - 1][:3],
        "MM": f"{date.month:02d}",
        "M": str(date.month),
        "do": _ordinal(date.day),
        "dd": f"{date.day:02d}",
        "d": str(date.day),
        "EEEE": _DAYS[date.weekday()],
        "EEE": _DAYS[date.weekday()][:3],
        "EE": _DAYS[date.weekday()][:3],
        "E": _DAYS[date.weekday()][:3],
    }
    return "".join(
        shown.get(token, token[1:-1] if token.startswith("'") and len(token) > 1 else token)
        for token in _DATE_TOKEN.findall(pattern)
    )


def date_parsed(text: str, pattern: str) -> datetime.date | None:
    """The date `text` writes in `pattern`, or None."""
    parts = {
        "yyyy": r"(?P<year>\d{4})",
        "yy": r"(?P<year2>\d{2})",
        "MMMM": r"(?P<month_name>[A-Za-z]+)",
        "MMM": r"(?P<month_abbr>[A-Za-z]{3})",
        "MM": r"(?P<month>\d{2})",
        "M": r"(?P<month>\d{1,2})",
        "do": r"(?P<day>\d{1,2})(?:st|nd|rd|th)",
        "dd": r"(?P<day>\d{2})",
        "d": r"(?P<day>\d{1,2})",
        "EEEE": r"[A-Za-z]+",
        "EEE": r"[A-Za-z]+",
        "EE": r"[A-Za-z]+",
        "E": r"[A-Za-z]+",
    }
    seen: set[str] = set()
    regex = []
    for token in _DATE_TOKEN.findall(pattern):
        part = parts.get(token)
        if part is None:
            regex.append(re.escape(token[1:-1] if token.startswith("'") and len(token) > 1 else token))
            continue
        group = re.search(r"\?P<(\w+)>", part)
        if group is not None:
            if group.group(1) in seen:
                part = part.replace(f"?P<{group.group(1)}>", "?:")
            seen.add(group.group(1))
        regex.append(part)
    match = re.fullmatch("".join(regex), text.strip(), re.IGNORECASE)
    if match is None:
        return None
    found = match.groupdict()
    names = [name.lower() for name in _MONTHS]
    try:
        year = int(found["year"]) if found.get("year") else 2000 + int(found.get("year2") or "x")
        if found.get("month"):
            month = int(found["month"])
        elif found.get("month_name"):
            month = names.index(found["month_name"].lower()) + 1
        else:
            month = [name[:3] for name in names].index((found.get("month_abbr") or "").lower()) + 1
        return datetime.date(year, month, int(found.get("day") or "x"))
    except ValueError:
        return None


@dataclass(frozen=True)
class Graph:
    """What this import needs of a Logseq graph's `config.edn`."""

    root: Path
    file_name_format: str = LEGACY  # no `:file/name-format` means the legacy format
    title_format: str = DEFAULT_TITLE_FORMAT
    journal_file_format: str = DEFAULT_JOURNAL_FILE_FORMAT
    hidden: tuple[str, ...] = ()  # folders and files Logseq leaves out of the graph, as paths from its root
    problem: str = ""  # why config.edn was not read whole, for the import's summary

    def title_of(self, relative_path: str) -> str:
        """The title Logseq gives the file at `relative_path` (without `.md`) when it has no `title::`."""
        date = self.journal_date(relative_path)
        if date is not None:
            return self.journal_title(date)
        return file_name_decoded(PurePosixPath(relative_path).name, self.file_name_format)

    def journal_date(self, relative_path: str) -> datetime.date | None:
        """The date of a journal file (`journals/2021_07_19`), or None for a page."""
        place = PurePosixPath(relative_path)
        if len(place.parts) != 2 or place.parts[0] != "journals":
            return None
        for pattern in (self.journal_file_format, DEFAULT_JOURNAL_FILE_FORMAT, "yyyy-MM-dd"):
            date = date_parsed(place.name, pattern)
            if date is not None:
                return date
        return None

    def journal_title(self, date: datetime.date) -> str:
        if date_format_known(self.title_format):
            return date_formatted(date, self.title_format)
        return date.isoformat()

    def date_value(self, value: str) -> datetime.date | None:
        """A date property's value (`[[2025-02-22 Sat]]`, `[[Feb 22nd, 2025]]`) as a date, or None."""
        text = link_unwrapped(value)
        if date_format_known(self.title_format):
            date = date_parsed(text, self.title_format)
            if date is not None:
                return date
        try:
            return datetime.date.fromisoformat(text[:10])
        except ValueError:
            return None

    def is_page(self, relative_path: str) -> bool:
        """Whether the file at `relative_path` is one of the graph's pages or journals (not, say, a copy in
        Logseq's own `logseq/bak/`)."""
        parts = PurePosixPath(relative_path).parts
        return len(parts) == 2 and parts[0] in STORAGE_FOLDERS

    def page_read(
        self, meta: dict[str, Any], properties: dict[str, Any], body: str, place: str
    ) -> EditorPage:
        """A Logseq page: its title is `title::` (or front matter's), else its file name in the graph's format,
        a journal's its date in the graph's title format; `alias::`, `tags::` and `type::` are lists of names
        (`[[a]], b`), `type::` kept as tags; `description::` is the page's first text; date properties in the
        graph's date format are dates; block properties are no text."""
        journal = self.journal_date(place)
        written = [meta.get("title"), properties.get("title")]
        title = next(
            (str(t).strip() for t in written if isinstance(t, str | int | float) and str(t).strip()), None
        )
        title = title or self.title_of(place)
        read: dict[str, Any] = {}
        for key in ("alias", "aliases"):
            if isinstance(properties.get(key), str):
                read[key] = list(properties_listed(properties[key]))
        tags = [
            name
            for key in ("tags", "tag", "type")
            if isinstance(properties.get(key), str)
            for name in properties_listed(properties[key])
        ]
        if tags:
            read["tags"], read["tag"] = tags, None
        for key in DATE_FIELDS:
            value = properties.get(key)
            if isinstance(value, str):
                # A property, not front matter: one that is no date in any format the graph uses is left out.
                read[key] = self.date_value(value)
        description = str(properties.get("description") or "").strip()
        linked = " ".join(
            str(properties[key]) for key in ("tags", "tag", "type") if isinstance(properties.get(key), str)
        )
        text = logseq_body(body)
        if description:
            text = f"{description}\n\n{text}"
        return EditorPage(
            title=title,
            body=text,
            properties=read,
            description=description,
            date=journal,
            linked=f"\n{linked}" if "[[" in linked else "",
            hidden=self.hides(place),
        )

    def hides(self, relative_path: str) -> bool:
        """Whether `:hidden` names the file at `relative_path` (without `.md`) or a folder it is in."""
        path = "/" + relative_path.lstrip("/")
        return any(
            path in (hidden, hidden.removesuffix(".md")) or path.startswith(hidden.rstrip("/") + "/")
            for hidden in self.hidden
        )


def is_graph(folder: Path) -> bool:
    """A folder with Logseq's `config.edn`, or with its `pages/` and `journals/` and no Obsidian settings (a
    vault with folders of those names keeps its addresses)."""
    if (folder / CONFIG).is_file():
        return True
    return all((folder / name).is_dir() for name in STORAGE_FOLDERS) and not (folder / ".obsidian").exists()


_CONFIG_KEYS = {
    ":file/name-format": r":([\w-]+)",
    ":journal/page-title-format": r'"((?:[^"\\]|\\.)*)"',
    ":date-formatter": r'"((?:[^"\\]|\\.)*)"',
    ":journal/file-name-format": r'"((?:[^"\\]|\\.)*)"',
}


def graph_of(folder: Path) -> Graph | None:
    """The Logseq graph at `folder`, or None when it is not one. A `config.edn` that cannot be read whole is
    searched for its keys one by one, and the graph says so (`problem`)."""
    if not folder.is_dir() or not is_graph(folder):
        return None
    config: dict[Any, Any] = {}
    problem = ""
    path = folder / CONFIG
    if path.is_file():
        try:
            with path.open("rb") as config_file:
                data = config_file.read(CONFIG_MAX_BYTES + 1)
            text = data.decode("utf-8", errors="replace")
            if len(data) > CONFIG_MAX_BYTES:
                text, problem = "", CONFIG_TOO_LARGE.format(limit=CONFIG_MAX_BYTES)
        except OSError as error:
            text, problem = "", CONFIG_NOT_READ.format(reason=error.strerror or error)
        try:
            read = edn_read(text) if text.strip() else {}
            if not isinstance(read, dict):
                raise EdnError("it is not a map")
            config = read
        except (EdnError, RecursionError) as error:
            problem = CONFIG_NOT_READ.format(reason=f"not EDN: {error}")
            for key, value in _CONFIG_KEYS.items():
                found = re.search(rf"{re.escape(key)}\s+{value}", text)
                if found is not None:
                    config[key] = found.group(1) if value.startswith('"') else f":{found.group(1)}"
    name_format = config.get(":file/name-format")
    title_format = config.get(":journal/page-title-format", config.get(":date-formatter"))
    file_format = config.get(":journal/file-name-format")
    hidden = config.get(":hidden")
    graph = Graph(
        root=folder,
        file_name_format=TRIPLE_LOWBAR if name_format == f":{TRIPLE_LOWBAR}" else LEGACY,
        title_format=title_format if isinstance(title_format, str) else DEFAULT_TITLE_FORMAT,
        journal_file_format=file_format if isinstance(file_format, str) else DEFAULT_JOURNAL_FILE_FORMAT,
        hidden=tuple(
            "/" + item.strip("/") for item in hidden or () if isinstance(item, str) and item.strip("/")
        )
        if isinstance(hidden, list)
        else (),
    )
    if not problem and not date_format_known(graph.title_format):
        problem = CONFIG_UNKNOWN_FORMAT.format(key=":journal/page-title-format", value=graph.title_format)
    if problem:
        logger.warning("%s %s", path, problem)
    return replace(graph, problem=problem)


_URL_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def file_name_decoded(name: str, name_format: str = TRIPLE_LOWBAR) -> str:
    """A page's title from its file name: `a___b` is `a/b` (`:triple-lowbar`), `a.b` and `a%2Fb` are `a/b`
    (legacy), and URL escapes (`%3F`) are their characters in both."""
    if name_format == TRIPLE_LOWBAR:
        return unquote(name.replace("___", "/")) if _URL_ESCAPE.search(name) else name.replace("___", "/")
    if _URL_ESCAPE.search(name):
        return unquote(name)  # a name with escapes writes its namespaces as %2F, its dots as dots
    return name.replace(".", "/")


# Block properties Logseq writes under a block (`id::`, `collapsed::`, `card-next-schedule::`,
# `logseq.order-list-type::`): a line of `name:: value`, a list item's too. Never text of a page.
BLOCK_PROPERTY = re.compile(
    r"^[ \t]*+(?:[-*+][ \t]+)?[A-Za-z][\w.\-/]*::(?:[ \t][^\n]*)?(?:\n|$)", re.MULTILINE
)
_BLOCK_ID = re.compile(r"^[ \t]*+id::[ \t]*+([0-9A-Fa-f-]{8,})[ \t]*$", re.MULTILINE)
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+(.*)$")
BLOCK_REF = re.compile(r"\(\(([0-9A-Fa-f][0-9A-Fa-f-]{7,})\)\)")
MACRO = re.compile(r"\{\{[ \t]*([\w.-]+)[ \t]*([^{}\n]*?)[ \t]*\}\}")
_PAGE_REF = re.compile(r"\[\[([^\[\]]+)\]\]")
# Macros whose argument is the words a reader sees; those whose argument is a media address.
_WORDS_MACROS = frozenset({"cloze"})
_MEDIA_MACROS = frozenset({"video", "youtube", "vimeo", "bilibili", "tweet", "twitter", "pdf", "audio"})


def _indent(text: str) -> int:
    return len(text.expandtabs(2)) - len(text.expandtabs(2).lstrip())


@dataclass(frozen=True)
class Block:
    """A block another page may reference: its own words and those of the blocks under it."""

    text: str
    subtree: tuple[str, ...] = ()


def page_blocks(body: str) -> dict[str, Block]:
    """The blocks of a page's body (properties still in it) that carry an `id::`, by their id (lower case)."""
    if "id::" not in body:
        return {}
    lines = body.split("\n")
    blocks: dict[str, Block] = {}
    starts: list[tuple[int, int]] = []  # (line, indent) of each block's first line
    for number, line in enumerate(lines):
        bullet = _BULLET.match(line)
        if bullet is not None and not BLOCK_PROPERTY.fullmatch(line):
            starts.append((number, _indent(bullet.group(1))))
        elif line.strip() and not line[:1].isspace() and not BLOCK_PROPERTY.fullmatch(line):
            starts.append((number, -1))  # a paragraph outside any list is a block of its own
    at = counted = 0  # the line of each id, counted as the ids come in order
    for match in _BLOCK_ID.finditer(body):
        at += body.count("\n", counted, match.start())
        counted = match.start()
        before = bisect_left(starts, (at, -2))
        if before == 0:
            continue
        first, indent = starts[before - 1]
        own: list[str] = []
        under: list[str] = []
        for number in range(first, len(lines)):
            line = lines[number]
            bullet = _BULLET.match(line)
            if number > first and bullet is not None and _indent(bullet.group(1)) <= indent:
                break
            if number > first and indent < 0 and not line.strip():
                break
            if number > first and bullet is None and line.strip() and 0 <= indent >= _indent(line):
                break  # a line no deeper than the bullet is past its block
            if BLOCK_PROPERTY.fullmatch(line) or not line.strip():
                continue
            if len(own) + len(under) >= BLOCK_LINES_MAX:
                break
            words = bullet.group(2) if bullet is not None else line.strip()
            (own if number == first or (not under and bullet is None) else under).append(words.strip())
        blocks[match.group(1).lower()] = Block(" ".join(own), tuple(under))
    return blocks


def properties_listed(value: str) -> tuple[str, ...]:
    """A property's list of names as Logseq writes it: `[[a b]], c, #d` is `a b`, `c`, `d`."""
    names = _PAGE_REF.findall(value)
    rest = _PAGE_REF.sub(",", value)
    names += [part.strip().lstrip("#") for part in rest.split(",")]
    return tuple(dict.fromkeys(name.strip() for name in names if name.strip()))


@dataclass
class _Edits:
    """Replacements in a text, with where each old offset lands in the new text."""

    pieces: list[str] = field(default_factory=list)
    moves: list[tuple[int, int]] = field(default_factory=list)  # (old offset after an edit, shift)

    def moved(self, offset: int) -> int:
        shift = 0
        for after, delta in self.moves:
            if offset >= after:
                shift = delta
        return offset + shift


def _substituted(
    text: str, pattern: re.Pattern[str], replace_with: Callable[[re.Match[str]], str]
) -> tuple[str, _Edits]:
    edits = _Edits()
    cursor = shift = 0
    for match in pattern.finditer(text):
        new = replace_with(match)
        edits.pieces += [text[cursor : match.start()], new]
        shift += len(new) - (match.end() - match.start())
        edits.moves.append((match.end(), shift))
        cursor = match.end()
    edits.pieces.append(text[cursor:])
    return "".join(edits.pieces), edits


def _sentences(words: Iterable[str]) -> str:
    return " ".join(w if w.rstrip(_END)[-1:] in ".!?:;" else f"{w}." for w in words if w)


# While a page is resolved, each block's words stand between these marks, with the place of the page they come
# from (`_marked`), so that every stretch of borrowed words is found again in the finished text
# (`_borrowed_found`): private-use characters, which no note's own text holds.
_FROM, _WORDS, _END = "\ue000", "\ue001", "\ue002"
_MARK = re.compile(f"{_FROM}([^{_WORDS}]*){_WORDS}|{_END}")


def _marked(page: ParsedArticle, words: str) -> str:
    return f"{_FROM}{page.relative_path or page.path}{_WORDS}{words}{_END}"


@dataclass(frozen=True)
class _Unmarked:
    """A resolved text without its marks, the stretches they held, and where each marked offset now stands."""

    text: str
    borrowed: tuple[Borrowed, ...]
    mark_ends: list[int]  # where each mark ends in the marked text
    marks_gone: list[int]  # the characters of marks up to and with each

    def moved(self, offset: int) -> int:
        before = bisect_right(self.mark_ends, offset)
        return offset - (self.marks_gone[before - 1] if before else 0)


def _borrowed_found(marked: str) -> _Unmarked:
    pieces: list[str] = []
    borrowed: list[Borrowed] = []
    opened: list[tuple[int, str]] = []  # (where, whose) of each stretch still open, the innermost last
    found = _Unmarked("", (), [], [])
    cursor = length = 0
    for match in _MARK.finditer(marked):
        pieces.append(marked[cursor : match.start()])
        length += match.start() - cursor
        if match.group(1) is not None:
            opened.append((length, match.group(1)))
        elif opened:
            start, place = opened.pop()
            borrowed.append((start, length, place))
        found.mark_ends.append(match.end())
        gone = found.marks_gone[-1] if found.marks_gone else 0
        found.marks_gone.append(gone + match.end() - match.start())
        cursor = match.end()
    pieces.append(marked[cursor:])
    return replace(found, text="".join(pieces), borrowed=tuple(sorted(borrowed)))


@dataclass(frozen=True)
class ResolvedGraph:
    notes: list[ParsedArticle]
    duplicates: list[tuple[str, str]]  # (path, message): files whose title another file already has


def pages_resolved(
    notes: Sequence[ParsedArticle],
    *,
    blocks: Mapping[str, dict[str, Block]],
    body_words: Callable[[str], str],
    links_of: Callable[[str], tuple[WrittenLink, ...]],
) -> ResolvedGraph:
    """The graph's pages as Logseq shows them: one page per title (the first by path; the others are
    reported once, with every path), and every block reference and macro resolved. A page whose text now
    holds words of other pages gets a content hash of what it shows, so an edit of a referenced block
    reaches it on the next sync, and links to their pages. `blocks` are the pages' blocks others may reference,
    by the place of their page (`page_blocks`); `body_words` cleans a block's text as a page body
    is cleaned; `links_of` reads the links of a text."""
    by_title: dict[str, list[ParsedArticle]] = defaultdict(list)
    for note in notes:
        by_title[note.title.strip().lower()].append(note)
    kept: list[ParsedArticle] = []
    duplicates: list[tuple[str, str]] = []
    for group in by_title.values():
        group = sorted(group, key=lambda note: note.relative_path or note.path)
        kept.append(group[0])
        if len(group) > 1:
            paths = " and ".join(note.path for note in group)
            message = DUPLICATE_TITLE.format(paths=paths, title=group[0].title, kept=group[0].path)
            duplicates.append((group[1].path, message))  # told once, whatever the number of files
    order = {id(note): i for i, note in enumerate(notes)}
    kept.sort(key=lambda note: order[id(note)])
    table: dict[str, tuple[Block, ParsedArticle]] = {
        uuid: (block, note) for note in kept for uuid, block in blocks.get(note.relative_path, {}).items()
    }

    def words(uuid: str, *, whole: bool) -> str:
        found = table.get(uuid.lower())
        if found is None:
            return BLOCK_NOT_SHOWN
        block, page = found
        lines = [block.text, *block.subtree] if whole else [block.text]
        # One level: a block quoting a block (each line's end read with the words it quotes).
        lines = [BLOCK_REF.sub(lambda m: _inner(m.group(1)), line) for line in lines]
        text = _sentences(lines) if whole else lines[0]
        text = MACRO.sub(lambda m: _macro(m, lambda _u: BLOCK_NOT_SHOWN), text)
        return _marked(page, f"{body_words(text).strip()} ([[{page.title}]])")

    def _inner(uuid: str) -> str:
        found = table.get(uuid.lower())
        if found is None:
            return BLOCK_NOT_SHOWN
        return _marked(found[1], body_words(found[0].text).strip())

    resolved = []
    for note in kept:
        if "((" not in note.body and "{{" not in note.body:
            resolved.append(note)
            continue
        body, macros = _substituted(
            note.body, MACRO, lambda m: _macro(m, lambda uuid: words(uuid, whole=True))
        )
        body, refs = _substituted(body, BLOCK_REF, lambda m: words(m.group(1), whole=False))
        if body == note.body:
            resolved.append(note)
            continue
        found = _borrowed_found(body)
        anchors = {key: found.moved(refs.moved(macros.moved(at))) for key, at in note.anchors.items()}
        digest = hashlib.sha256(f"{note.content_hash}\n{found.text}".encode()).hexdigest()
        links = tuple(dict.fromkeys((*note.links, *links_of(found.text))))  # the referenced blocks' pages too
        resolved.append(
            replace(
                note,
                body=found.text,
                anchors=anchors,
                content_hash=digest,
                links=links,
                borrowed=found.borrowed,
            )
        )
    return ResolvedGraph(resolved, duplicates)


def _macro(match: re.Match[str], block: Callable[[str], str]) -> str:
    """A macro as words: `{{embed [[page]]}}` an embed, `{{embed ((id))}}` the block's words, `{{cloze
    words}}` its words, a video its address as a link, anything else a short trace of what it was."""
    name, argument = match.group(1).lower(), match.group(2).strip()
    if name == "embed":
        page = _PAGE_REF.fullmatch(argument)
        if page is not None:
            return f"![[{page.group(1).strip()}]]"
        ref = BLOCK_REF.fullmatch(argument)
        if ref is not None:
            return block(ref.group(1))
    if name in _WORDS_MACROS:
        return argument
    if name in _MEDIA_MACROS and argument:
        return f"[{name}]({argument})" if "://" in argument else f"({name}: {argument})"
    return MACRO_NOT_SHOWN.format(name=name)


_DRAWER_OPEN = re.compile(r"[ \t]*:(?:LOGBOOK|PROPERTIES):[ \t]*")
_DRAWER_CLOSE = re.compile(r"[ \t]*:END:[ \t]*")
_BLOCK_FENCE = re.compile(r"[ \t]*(?:[-*+][ \t]+)?#\+(?:BEGIN|END)_[A-Za-z]+\b.*")


def logseq_body(body: str) -> str:
    """A Logseq page's body without its editor's markup: block properties, the drawers Logseq keeps under a
    block (`:LOGBOOK:` of a task's clock entries, to `:END:`), and the `#+BEGIN_QUOTE`/`#+END_QUOTE` lines
    around a quote, note or tip (their words stay)."""
    lines: list[str] = []
    drawer = False
    for line in body.split("\n"):
        if drawer:
            drawer = not _DRAWER_CLOSE.fullmatch(line)
            continue
        if _DRAWER_OPEN.fullmatch(line):
            drawer = True
            continue
        if not _BLOCK_FENCE.fullmatch(line):
            lines.append(line)
    return BLOCK_PROPERTY.sub("", "\n".join(lines))


# Logseq's own copies of pages, in its `logseq/` folder: a copy saved before a page was made private would
# publish what the page no longer does.
LOGSEQ_COPIES = frozenset({"bak", "version-files"})


class _PagesRead:
    """A graph's rules for reading its pages (`Graph.page_read`), keeping the blocks of each page that others
    may reference, by its place: they are the graph's to resolve, not the note's."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.blocks: dict[str, dict[str, Block]] = {}

    def page_read(
        self, meta: dict[str, Any], properties: dict[str, Any], body: str, place: str
    ) -> EditorPage:
        blocks = page_blocks(body)
        if blocks:
            self.blocks[place] = blocks
        return self.graph.page_read(meta, properties, body, place)


class LogseqContext:
    """A Logseq graph for one sync, its `config.edn` read once; none when the garden is no graph. Its pages
    hold each other's blocks, so they are resolved once all are read (`gathered`) and never read again."""

    def __init__(self, folder: Path | None) -> None:
        self.graph = graph_of(folder.resolve()) if folder is not None else None
        self.pages = _PagesRead(self.graph) if self.graph is not None else None
        self.notices: list[tuple[str, str]] = []
        if folder is not None and self.graph is not None and self.graph.problem:
            self.notices.append((str(folder / CONFIG), self.graph.problem))

    def owns(self, path: Path) -> bool:
        return self.graph is not None and path.suffix.lower() == MARKDOWN_SUFFIX

    def parse(self, path: Path, root: Path | None) -> ParsedArticle:
        max_bytes = settings.GARDEN_NOTE_MAX_BYTES
        return parse_article_file(path, root=root, max_bytes=max_bytes, rules=self.pages)

    def slug_of(self, place: str) -> str:
        if self.graph is not None and self.graph.is_page(place):
            return article_slug(self.graph.title_of(place), place)
        return article_slug(place, place)

    def rereadable(self, note: ParsedArticle) -> bool:
        return False  # its text holds other pages' blocks

    def gathered(self, notes: Sequence[ParsedArticle]) -> list[ParsedArticle]:
        if self.pages is None:
            return list(notes)
        resolved = pages_resolved(
            notes,
            blocks=self.pages.blocks,
            body_words=lambda text: editor_markup_removed(text)[0],
            links_of=written_links,
        )
        self.notices += resolved.duplicates
        return resolved.notes


class LogseqFormat:
    """Logseq graphs: a folder with `logseq/config.edn` (or `pages/` and `journals/`), read as Logseq shows it."""

    name = "logseq"
    suffixes = frozenset({MARKDOWN_SUFFIX})

    def place_of(self, relative: PurePosixPath) -> str:
        return markdown.FORMAT.place_of(relative)

    def content_hash(self, data: bytes) -> str:
        return markdown.FORMAT.content_hash(data)

    def private_place(self, relative: PurePosixPath) -> bool:
        folders = [part.lower() for part in relative.parts[:-1]]
        return any(a == "logseq" and b in LOGSEQ_COPIES for a, b in itertools.pairwise(folders))

    def public_place(self, relative: PurePosixPath) -> bool:
        return False

    def opened(
        self, root: Path | None, imported: ImportedTitle | None, files: GardenFiles | None
    ) -> LogseqContext:
        return LogseqContext(root)


FORMAT = LogseqFormat()
