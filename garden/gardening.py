"""Gardening syntax: what in a note is its editor's markup rather than its content.

Comments (`%% ... %%`, `<!-- ... -->`) are the editor's own and are dropped; so are block ids (`^abc123` at the
end of a line: a link to one still reaches the note), the `==` of highlights (the words stay) and Dataview or
Logseq fields (`key:: value`). None of it reaches a chunk, a claim or a page. Code keeps all of it: in a code
block `%%` is code. Callouts (`> [!note] Title`) are content and stay; pages render them as callouts. Pure.
"""

from __future__ import annotations

import re
from typing import Any

# Fenced code blocks and inline code, whose text is left exactly as written.
CODE = re.compile(r"^[ \t]*(```+|~~~+).*?^[ \t]*\1[ \t]*$|`[^`\n]+`", re.DOTALL | re.MULTILINE)
_COMMENT = re.compile(r"[ \t]*(?:%%.*?%%|<!--.*?-->)", re.DOTALL)
_BLOCK_ID = re.compile(r"(?:[ \t]+|^)\^([A-Za-z0-9-]+)[ \t]*$", re.MULTILINE)
# Where a block id stood while the text is being cleaned; NUL never survives into stored text.
_ANCHOR = re.compile(r"\x00([A-Za-z0-9-]+)\x00")
_HIGHLIGHT = re.compile(r"==(?=\S)(.+?)(?<=\S)==")
_FIELD_NAME = r"[^\W\d][\w -]{0,40}?"
# A field on a line of its own (a list item's too), and one inline in brackets: `[key:: value]`.
_FIELD_LINE = re.compile(rf"^[ \t]*(?:[-*+][ \t]+)?{_FIELD_NAME}::(?:[ \t].*)?\n?", re.MULTILINE)
_FIELD_INLINE = re.compile(rf"[ \t]*[\[(]{_FIELD_NAME}::[^\])\n]*[\])]")
_PROPERTY = re.compile(rf"^({_FIELD_NAME})::[ \t]*(.*)$")
_BLANK_RUNS = re.compile(r"\n{3,}")


def without_code(text: str) -> str:
    """`text` with its code blanked out (same length), for searching prose only."""
    return CODE.sub(lambda m: " " * len(m.group(0)), text)


def _outside_code(text: str, clean: Any) -> str:
    pieces, cursor = [], 0
    for match in CODE.finditer(text):
        pieces += [clean(text[cursor : match.start()]), match.group(0)]
        cursor = match.end()
    pieces.append(clean(text[cursor:]))
    return "".join(pieces)


def _prose_clean(prose: str) -> str:
    prose = _COMMENT.sub("", prose)
    prose = _BLOCK_ID.sub(lambda m: f"\x00{m.group(1)}\x00", prose)
    prose = _HIGHLIGHT.sub(r"\1", prose)
    prose = _FIELD_INLINE.sub("", prose)
    return _FIELD_LINE.sub("", prose)


def editor_markup_removed(body: str) -> tuple[str, dict[str, int]]:
    """The note's content: its body without comments, block ids, highlight marks and fields; and where each
    block id stood in it (lower case id -> offset of the end of its block), so a link to `#^id` lands there."""
    text = _BLANK_RUNS.sub("\n\n", _outside_code(body, _prose_clean)).strip("\n")
    anchors: dict[str, int] = {}
    removed = 0
    for match in _ANCHOR.finditer(text):
        anchors[match.group(1).lower()] = max(match.start() - removed - 1, 0)
        removed += len(match.group(0))
    return _ANCHOR.sub("", text), anchors


_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def heading_offset(body: str, heading: str) -> int | None:
    """Where the heading `heading` (any level, any case) starts in `body`, or None."""
    section = _heading_section(body, heading)
    return section[0] if section else None


def heading_section(body: str, heading: str) -> str | None:
    """The text under the heading `heading`, to the next heading as high or higher; None if there is none."""
    section = _heading_section(body, heading)
    return body[section[1] : section[2]].strip("\n") if section else None


def headings_above(body: str, offset: int) -> list[str]:
    """The headings whose sections hold the passage at `offset` in `body`, outermost first ("Stations",
    "Fellside"): a passage's place in its note. Headings the passage opens with count: its text is under them."""
    text = without_code(body)
    prose = offset
    for match in _HEADING.finditer(text, offset):
        if text[prose : match.start()].strip():
            break
        prose = match.end()
    path: list[tuple[int, str]] = []
    for match in _HEADING.finditer(text):
        if match.start() > prose:
            break
        level = len(match.group(1))
        path = [(lvl, title) for lvl, title in path if lvl < level]
        path.append((level, match.group(2).strip()))
    return [title for _, title in path]


def _heading_section(body: str, heading: str) -> tuple[int, int, int] | None:
    """(where the heading starts, where its text starts, where its section ends), headings in code ignored."""
    wanted = heading.strip().lower()
    headings = list(_HEADING.finditer(without_code(body)))
    for i, match in enumerate(headings):
        if match.group(2).strip().lower() != wanted:
            continue
        level = len(match.group(1))
        end = next((h.start() for h in headings[i + 1 :] if len(h.group(1)) <= level), len(body))
        return match.start(), match.end(), end
    return None


def page_properties(body: str) -> tuple[dict[str, Any], str]:
    """Logseq-style properties on the note's first lines (`title:: Bee forage`, `alias:: forage, bees`), as
    front matter would give them (names in lower case), and the body after them. Blank lines before them count,
    and so does a first block of properties alone (`- public:: false`): Logseq reads that block as the page's."""
    properties: dict[str, Any] = {}
    lines = body.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    taken = first
    for line in lines[first:]:
        text = line.strip()
        if taken == first and text.startswith("- "):
            text = text[2:].lstrip()
        match = _PROPERTY.match(text)
        if not match:
            break
        properties[match.group(1).strip().lower()] = match.group(2).strip()
        taken += 1
    return (properties, "\n".join(lines[taken:])) if properties else ({}, body)
