"""A page's blocks as Logseq writes them: bullets, their ids (`id::`), block properties, references
(`((uuid))`) and macros (`{{embed ...}}`); and a page's body as Logseq shows it (`logseq_body`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

# Lines of a block (its own and those under it) that a reference or an embed shows at most: an embed of a
# page's first block would otherwise copy the whole page, and a chain of nested blocks the square of it.
BLOCK_LINES_MAX = 50
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
