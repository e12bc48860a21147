"""An Org file's text read into an `OrgDocument`: its keywords (`#+TITLE:`), its file's property drawer, the ids
its file and headings carry, and its body as the Markdown note it exports to, so the garden reads it as it
reads any note. Pure: no files, no Django.

What Org's own export leaves out is left out here: comments (`# ...`, `#+BEGIN_COMMENT`), keywords, drawers,
planning lines, export blocks, and every subtree whose heading is tagged `:noexport:` or `:private:`, starts with
`COMMENT`, or has a property that marks it private (`garden.formats.org.reading.private_marker`): none of its
words reach the note, and an id link to its heading reaches the note, never the heading's title.

Headings (`* ** ***`) become Markdown headings, one level down when the file has a `#+TITLE:` (the title is the
page's heading, as in Org's HTML export). Links become the garden's links: `[[file:x.org][desc]]` and
`[[file:x.org::*Heading]]` a wikilink to that note (its path below the garden), `[[id:...][desc]]` one to the
note or heading holding that id (`resolve_id`), `[[x]]` one to the note named x, a web address a Markdown link,
`[[file:plan.png]]` an image. `#+BEGIN_SRC lang` and `#+BEGIN_EXAMPLE` blocks and `:` lines are code fences,
`#+BEGIN_QUOTE` a quote; `*bold*`, `/italic/`, `+struck+`, `=code=` and `~code~` their Markdown marks; lists and
tables stay lists and tables.

Each line is read once, and every pattern is linear in a line: emphasis is read over at most
`EMPHASIS_MAX_CHARS`, a link's parts hold no bracket.
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from text.markup import IMAGES, heading_words

# Heading tags that keep a subtree out: Org's `org-export-exclude-tags` default, and the garden's own word.
PRIVATE_TAGS = frozenset({"noexport", "private"})
COMMENT_HEADING = "COMMENT"  # `* COMMENT Draft`: Org never exports it
# Org reads emphasis across at most two lines; a longer run between two marks is written text, not markup, and
# the bound keeps reading linear in a line of many openers.
EMPHASIS_MAX_CHARS = 300
EMPHASIS_MARKS = {"*": "**", "/": "*", "+": "~~"}

_HEADING = re.compile(r"^(\*++)[ \t]++(.*+)$")
_KEYWORD = re.compile(r"^[ \t]*+#\+([A-Za-z_][\w-]*+):[ \t]*+(.*+)$")
_BLOCK_BEGIN = re.compile(r"^[ \t]*+#\+BEGIN_(\w++)[ \t]*+(.*+)$", re.IGNORECASE)
_BLOCK_END = re.compile(r"^[ \t]*+#\+END_(\w++)", re.IGNORECASE)
_COMMENT_LINE = re.compile(r"^[ \t]*+#(?:[ \t]|$)")
_DRAWER_BEGIN = re.compile(r"^[ \t]*+:([\w-]++):[ \t]*+$")
_DRAWER_END = re.compile(r"^[ \t]*+:END:[ \t]*+$", re.IGNORECASE)
_PROPERTY = re.compile(r"^[ \t]*+:([^\s:]++):(?:[ \t]++(.*+))?$")
_PLANNING = re.compile(r"^[ \t]*+(?:CLOSED|SCHEDULED|DEADLINE):")
_FIXED_WIDTH = re.compile(r"^([ \t]*+):(?: (.*+))?$")
_LIST_ITEM = re.compile(r"^([ \t]*+)([-+*]|\d++[.)])[ \t]++(.*+)$")
_TABLE_RULE = re.compile(r"^([ \t]*+)\|-[-+|]*+[ \t]*+$")
_SRC_ESCAPE = re.compile(r"^([ \t]*+),(\*|#\+)")
_PRIORITY = re.compile(r"^\[#[A-Za-z0-9]\][ \t]*+")
# `[[target]]` and `[[target][description]]`; neither part holds a bracket, so each `[[` reads to the next
# bracket at most.
_LINK = re.compile(r"\[\[([^\[\]\n]++)\](?:\[([^\[\]\n]*+)\])?\]")
_VERBATIM = re.compile(
    rf"(?<![^\s\-('\"{{])([=~])([^\s=~](?:[^\n]{{0,{EMPHASIS_MAX_CHARS}}}?[^\s])?)\1(?=[\s\-.,:!?;'\")}}\[]|$)"
)
_EMPHASIS = re.compile(
    rf"(?<![^\s\-('\"{{])([*/+])([^\s*/+](?:[^\n]{{0,{EMPHASIS_MAX_CHARS}}}?[^\s])?)\1(?=[\s\-.,:!?;'\")}}\[]|$)"
)
# Where a link or a verbatim span stood while the line's emphasis is read; private-use characters, taken out
# of the text first.
_HELD = re.compile("\ue000(\\d+)\ue001")
_HOLD_CHARS = str.maketrans("", "", "\ue000\ue001")
_ID_LINK = "id:"
_FILE_LINK = "file:"
_NOTE_SUFFIXES = (".org", ".md")
_ARTICLE_FILES = (".pdf",)  # files the garden reads as notes of their own, named with their suffix


@dataclass
class OrgDocument:
    # Lower-case key -> value (a key written twice: its values joined by a space).
    keywords: dict[str, str] = field(default_factory=dict)
    # Keywords written inside a subtree left out: never shown, but a file's privacy marker still counts there.
    hidden_keywords: dict[str, str] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)  # the file's property drawer, lower-case keys
    tags: list[str] = field(default_factory=list)  # `#+FILETAGS:` and the kept headings' tags, as written
    heading_ids: dict[str, str] = field(default_factory=dict)  # a kept heading's `:ID:` -> its title's words
    body: str = ""  # Markdown

    @property
    def file_ids(self) -> list[str]:
        return self.properties.get("id", "").split()


@dataclass
class _Heading:
    level: int
    title: str
    tags: list[str]
    properties: dict[str, str]
    private: bool = False


def tags_written(value: str) -> list[str]:
    """`:work:bees:` (or `work bees`) as its tags."""
    return [tag for tag in re.split(r"[\s:]+", value) if tag]


def _heading_read(level: int, text: str) -> _Heading:
    words = text.rstrip()
    tags: list[str] = []
    last = words.rsplit(None, 1)[-1] if words.split() else ""
    if len(last) > 1 and last.startswith(":") and last.endswith(":") and " " not in last:
        tags, words = tags_written(last), words[: -len(last)].rstrip()
    first, _, rest = words.partition(" ")
    commented = first == COMMENT_HEADING
    if commented:
        words = rest
    words = _PRIORITY.sub("", words.lstrip())
    heading = _Heading(level, words.strip(), tags, {})
    heading.private = commented or bool(PRIVATE_TAGS & {tag.lower() for tag in tags})
    return heading


class _Converter:
    """One Org text's lines into Markdown, in one pass."""

    def __init__(
        self,
        lines: list[str],
        place: str,
        resolve_id: Callable[[str], str | None],
        private: Callable[[dict[str, str]], bool],
    ) -> None:
        self.lines = lines
        self.place = place
        self.resolve_id = resolve_id
        self.private = private
        self.document = OrgDocument()
        self.out: list[str] = []
        self.shift = 0
        self.dropped_below: int | None = None  # the level of the private subtree being left out
        # The index of each line's next `:END:` and next heading (a drawer that closes after a heading, or never,
        # is text), and of each kind of block's ends, found once: no opener reads ahead again.
        self.next_end: list[int] = [len(lines)] * (len(lines) + 1)
        self.next_heading: list[int] = [len(lines)] * (len(lines) + 1)
        for index in range(len(lines) - 1, -1, -1):
            self.next_end[index] = index if _DRAWER_END.match(lines[index]) else self.next_end[index + 1]
            self.next_heading[index] = index if _HEADING.match(lines[index]) else self.next_heading[index + 1]
        self.block_ends: dict[str, list[int]] = defaultdict(list)
        for index, line in enumerate(lines):
            if closing := _BLOCK_END.match(line):
                self.block_ends[closing[1].lower()].append(index)

    # Inline markup.

    def _link(self, target: str, description: str | None) -> str:
        target, text = target.strip(), (description or "").strip()
        if target.startswith(_ID_LINK):
            found = self.resolve_id(target[len(_ID_LINK) :].strip())
            return f"[[{found}|{text}]]" if found and text else f"[[{found}]]" if found else text
        if "://" in target or target.startswith("mailto:"):
            return f"[{text or target}]({target})"
        if target.startswith(_FILE_LINK) or target.startswith(("./", "../", "/", "~/")):
            return self._file_link(target.removeprefix(_FILE_LINK), text)
        if target.startswith(("*", "#")):  # a heading or custom id of this file
            return text or target.lstrip("*#").strip()
        return f"[[{target}|{text}]]" if text else f"[[{target}]]"

    def _file_link(self, written: str, text: str) -> str:
        path, _, search = written.partition("::")
        lower = path.lower()
        if not text and lower.endswith(tuple(IMAGES)):
            return f"![]({path})"
        if not lower.endswith(_NOTE_SUFFIXES + _ARTICLE_FILES):
            return f"[{text or path}]({path})"
        if lower.endswith(_NOTE_SUFFIXES):
            path = path[: path.rfind(".")]
        note = posixpath.normpath(posixpath.join(posixpath.dirname(self.place), path))
        if note.startswith(("../", "/")) or note == "..":  # outside the garden: named by its file's name
            note = posixpath.basename(path)
        anchor = f"#{search.lstrip('*').strip()}" if search.startswith("*") else ""
        return f"[[{note}{anchor}|{text}]]" if text else f"[[{note}{anchor}]]"

    def inline(self, text: str) -> str:
        """A line's text with its links and marks in Markdown."""
        held: list[str] = []

        def hold(markdown: str) -> str:
            held.append(markdown)
            return f"\ue000{len(held) - 1}\ue001"

        text = text.translate(_HOLD_CHARS)
        text = _LINK.sub(lambda m: hold(self._link(m[1], m[2])), text)
        text = _VERBATIM.sub(lambda m: hold(_code(m[2])), text)
        text = _emphasis(text)
        for _ in range(3):  # a link's description may hold a verbatim span, held in its turn
            text = _HELD.sub(lambda m: held[int(m[1])], text)
        return text

    # Lines.

    def emit(self, line: str) -> None:
        if self.dropped_below is None:
            self.out.append(line)

    def heading(self, level: int, text: str, index: int) -> int:
        heading = _heading_read(level, text)
        after = index + 1
        while after < len(self.lines) and _PLANNING.match(self.lines[after]):
            after += 1
        if after < len(self.lines) and self._drawer_at(after) == "PROPERTIES":
            end = self.next_end[after + 1]
            heading.properties = _properties(self.lines[after + 1 : end])
            heading.private = heading.private or self.private(heading.properties)
            after = end + 1
            while after < len(self.lines) and _PLANNING.match(self.lines[after]):
                after += 1
        if self.dropped_below is not None and level <= self.dropped_below:
            self.dropped_below = None
        if self.dropped_below is None and heading.private:
            self.dropped_below = level
        if self.dropped_below is None:
            title = self.inline(heading.title)
            self.out += ["", f"{'#' * min(level + self.shift, 6)} {title}", ""]
            self.document.tags += heading.tags
            if "id" in heading.properties:
                for heading_id in heading.properties["id"].split():
                    self.document.heading_ids[heading_id] = heading_words(title)
        return after

    def _drawer_at(self, index: int) -> str | None:
        """The name of the drawer that opens at line `index` and closes before the next heading, or None."""
        opening = _DRAWER_BEGIN.match(self.lines[index])
        if opening is None or opening[1].upper() == "END":
            return None
        end = self.next_end[index + 1]
        if end >= len(self.lines) or self.next_heading[index + 1] < end:
            return None
        return opening[1].upper()

    def block(self, index: int, kind: str, argument: str) -> int:
        """The block opening at line `index`, emitted as Markdown; the index of the line after its end (a block
        that never ends runs to the end of the file)."""
        ends = self.block_ends.get(kind, [])
        at = bisect_right(ends, index)
        end = ends[at] if at < len(ends) else len(self.lines)
        content = self.lines[index + 1 : end]
        if kind in ("src", "example"):
            language = argument.split()[0] if kind == "src" and argument.split() else ""
            fence = "````" if any(line.lstrip().startswith("```") for line in content) else "```"
            self.emit(fence + language)
            for line in content:
                self.emit(_SRC_ESCAPE.sub(r"\1\2", line))
            self.emit(fence)
        elif kind == "quote":
            for line in content:
                self.emit(f"> {self.inline(line.strip())}".rstrip())
        elif kind not in ("comment", "export"):  # verse, center, a special block: its words
            for line in content:
                self.emit(self.inline(line))
        return end + 1

    def converted(self) -> OrgDocument:
        document, lines = self.document, self.lines
        self.shift = 1 if any(_is_title(line) for line in lines if not _HEADING.match(line)) else 0
        index, fixed, preamble = 0, False, True
        while index < len(lines):
            line = lines[index]
            is_fixed = _FIXED_WIDTH.match(line) is not None
            if fixed and not is_fixed:
                self.emit("```")
                fixed = False
            if heading := _HEADING.match(line):
                preamble = False
                index = self.heading(len(heading[1]), heading[2], index)
                continue
            if block := _BLOCK_BEGIN.match(line):
                index = self.block(index, block[1].lower(), block[2])
                continue
            if keyword := _KEYWORD.match(line):
                kept = document.keywords if self.dropped_below is None else document.hidden_keywords
                key = keyword[1].lower()
                kept[key] = f"{kept[key]} {keyword[2]}".strip() if key in kept else keyword[2].strip()
                index += 1
                continue
            if drawer := self._drawer_at(index):
                end = self.next_end[index + 1]
                if drawer == "PROPERTIES" and preamble:
                    document.properties.update(_properties(lines[index + 1 : end]))
                index = end + 1
                continue
            if _COMMENT_LINE.match(line):
                index += 1
                continue
            if is_fixed:
                if not fixed:
                    self.emit("```")
                    fixed = True
                written = _FIXED_WIDTH.match(line)
                self.emit((written[2] or "") if written else "")
            else:
                self.emit(self._line(line))
            index += 1
        if fixed:
            self.emit("```")
        document.tags = tags_written(document.keywords.get("filetags", "")) + document.tags
        document.body = "\n".join(self.out).strip("\n") + "\n"
        return document

    def _line(self, line: str) -> str:
        if rule := _TABLE_RULE.match(line):
            return rule[1] + "|" + "---|" * (line.count("+") + 1)
        if item := _LIST_ITEM.match(line):
            indent, bullet, rest = item[1], item[2], item[3]
            marker = f"{bullet[:-1]}." if bullet[-1] in ".)" else "-"
            term, separator, definition = rest.partition(" :: ")
            if separator:
                return f"{indent}{marker} **{self.inline(term.strip())}**: {self.inline(definition)}"
            return f"{indent}{marker} {self.inline(rest)}"
        return self.inline(line)


def _is_title(line: str) -> bool:
    keyword = _KEYWORD.match(line)
    return keyword is not None and keyword[1].lower() == "title" and bool(keyword[2].strip())


def _properties(lines: list[str]) -> dict[str, str]:
    properties: dict[str, str] = {}
    for line in lines:
        written = _PROPERTY.match(line)
        if written:
            key = written[1].lower().removesuffix("+")  # `:ROAM_ALIASES+:` adds to the value
            value = (written[2] or "").strip()
            properties[key] = f"{properties[key]} {value}".strip() if key in properties else value
    return properties


def _code(text: str) -> str:
    ticks = "``" if "`" in text else "`"
    return f"{ticks} {text} {ticks}" if ticks == "``" else f"`{text}`"


def _emphasis(text: str, depth: int = 0) -> str:
    """`*bold*`, `/italic/` and `+struck+` as Markdown's marks, nested ones too (a few levels deep)."""
    if depth > 2:
        return text
    return _EMPHASIS.sub(
        lambda m: f"{EMPHASIS_MARKS[m[1]]}{_emphasis(m[2], depth + 1)}{EMPHASIS_MARKS[m[1]]}", text
    )


def org_document(
    text: str,
    *,
    place: str,
    resolve_id: Callable[[str], str | None],
    private: Callable[[dict[str, str]], bool],
) -> OrgDocument:
    """The Org file `text` of the note at `place` (its path in the garden, without `.org`), read. `resolve_id`
    gives the note (and `#heading`) an id link names, or None; `private` says whether a heading's properties keep
    its subtree out."""
    return _Converter(text.split("\n"), place, resolve_id, private).converted()
