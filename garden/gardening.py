"""Gardening syntax: what in a note is its editor's markup rather than its content.

Comments (`%% ... %%`, `<!-- ... -->`) are the editor's own and are dropped; so are block ids (`^abc123` at the
end of a line: a link to one still reaches the note), the `==` of highlights (the words stay) and Dataview or
Logseq fields (`key:: value`). None of it reaches a chunk, a claim or a page. Code keeps all of it: in a code
block `%%` is code. Callouts (`> [!note] Title`) are content and stay; pages render them as callouts. Pure.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from typing import Any

# Every pattern here reads garden text, so each is linear in it: a run of spaces is matched only from its
# start and never given back (`(?<![ \t])[ \t]*+`), and an opener that finds no close on its line skips the
# rest of the line (no later opener there can close either) instead of being retried at every position.

# A fenced code block runs from a line opening with a fence (```` ``` ````, `~~~` or longer) to the next line that
# is a fence of the same length alone; inline code is `like this`. Their text is left exactly as written.
_FENCE_OPEN = re.compile(r"^[ \t]*+(`{3,}+|~{3,}+)", re.MULTILINE)
_FENCE_ALONE = re.compile(r"^[ \t]*+(`{3,}+|~{3,}+)[ \t]*+$", re.MULTILINE)
_INLINE_CODE = re.compile(r"`[^`\n]++`")
_COMMENT_CLOSE = {"%%": "%%", "<!--": "-->"}
_BLOCK_ID = re.compile(r"(?:(?<![ \t])[ \t]++|^)\^([A-Za-z0-9-]++)[ \t]*+$", re.MULTILINE)
# Where a block id stood while the text is being cleaned; NUL never survives into stored text.
_ANCHOR = re.compile(r"\x00([A-Za-z0-9-]+)\x00")
# `==marked==`; an opener with no close on its line takes the rest of the line as it is (group 1 unset).
_HIGHLIGHT = re.compile(r"==(?=\S)(?:(.+?)(?<=\S)==|[^\n]*+)")
_FIELD_NAME = r"[^\W\d][\w -]{0,40}?"
# A field on a line of its own (a list item's too), and one inline in brackets: `[key:: value]` (an inline
# opener with no close on its line takes the rest of the line as it is).
_FIELD_LINE = re.compile(rf"^[ \t]*(?:[-*+][ \t]+)?{_FIELD_NAME}::(?:[ \t].*)?\n?", re.MULTILINE)
_FIELD_INLINE = re.compile(rf"(?<![ \t])[ \t]*+[\[(]{_FIELD_NAME}::[^\])\n]*+[\])]?")
_PROPERTY = re.compile(rf"^({_FIELD_NAME})::[ \t]*(.*)$")
_BLANK_RUNS = re.compile(r"\n{3,}")


def fenced_blocks(text: str) -> dict[int, int]:
    """Each line of `text` that opens a fenced block that closes, by its start, and where its block ends (the end
    of the closing fence's line). A block may hold later openers; a fence that never closes is no block."""
    alone: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)  # fence -> (line start, line end)
    for match in _FENCE_ALONE.finditer(text):
        alone[match.group(1)].append((match.start(), match.end()))
    lengths: defaultdict[str, list[int]] = defaultdict(list)  # fence character -> the lengths that close
    for fence in sorted(alone, key=len, reverse=True):
        lengths[fence[0]].append(len(fence))
    blocks: dict[int, int] = {}
    for opening in _FENCE_OPEN.finditer(text):
        fence = opening.group(1)
        # The whole fence first, then ever shorter ones down to three characters (as a backtracking match would).
        for length in lengths.get(fence[0], []):
            if length > len(fence):
                continue
            closers = alone[fence[0] * length]
            later = bisect_right(closers, (opening.start(), len(text)))
            if later < len(closers):
                blocks[opening.start()] = closers[later][1]
                break
    return blocks


def code_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` has code, in order: fenced blocks (from the opening line's start to the end of the closing
    fence's line) and inline code. An unclosed fence is no code; its backticks may still open inline code."""
    blocks = iter(fenced_blocks(text).items())
    spans: list[tuple[int, int]] = []
    cursor = 0
    block = next(blocks, None)  # the next fenced block at or after `cursor`
    inline = _INLINE_CODE.search(text)  # the next inline code at or after `cursor`
    while True:
        while block is not None and block[0] < cursor:
            block = next(blocks, None)
        if inline is not None and inline.start() < cursor:
            inline = _INLINE_CODE.search(text, cursor)
        if block is None and inline is None:
            return spans
        if block is not None and (inline is None or block[0] <= inline.start()):
            spans.append(block)
        elif inline is not None:
            spans.append(inline.span())
        cursor = spans[-1][1]


def without_code(text: str) -> str:
    """`text` with its code blanked out (same length), for searching prose only."""
    pieces, cursor = [], 0
    for start, end in code_spans(text):
        pieces += [text[cursor:start], " " * (end - start)]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _outside_code(text: str, clean: Any) -> str:
    pieces, cursor = [], 0
    for start, end in code_spans(text):
        pieces += [clean(text[cursor:start]), text[start:end]]
        cursor = end
    pieces.append(clean(text[cursor:]))
    return "".join(pieces)


def _comments_removed(prose: str) -> str:
    """`prose` without `%% ... %%` and `<!-- ... -->` comments (and the spaces or tabs before each). Each kind of
    opener is looked for once: one with no close after it means none later has one either."""
    pieces, cursor = [], 0
    next_at = {opener: prose.find(opener) for opener in _COMMENT_CLOSE}
    while True:
        found = [(at, opener) for opener, at in next_at.items() if at >= 0]
        if not found:
            break
        at, opener = min(found)
        close = prose.find(_COMMENT_CLOSE[opener], at + len(opener))
        if close < 0:
            next_at[opener] = -1
            continue
        start = at
        while start > cursor and prose[start - 1] in " \t":
            start -= 1
        pieces.append(prose[cursor:start])
        cursor = close + len(_COMMENT_CLOSE[opener])
        for other, other_at in next_at.items():
            if 0 <= other_at < cursor:
                next_at[other] = prose.find(other, cursor)
    pieces.append(prose[cursor:])
    return "".join(pieces)


def _kept_if_unclosed(match: re.Match[str]) -> str:
    return match.group(0) if match.group(0)[-1] not in "])" else ""


def _prose_clean(prose: str) -> str:
    prose = _comments_removed(prose)
    prose = _BLOCK_ID.sub(lambda m: f"\x00{m.group(1)}\x00", prose)
    prose = _HIGHLIGHT.sub(lambda m: m.group(0) if m.group(1) is None else m.group(1), prose)
    prose = _FIELD_INLINE.sub(_kept_if_unclosed, prose)
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


# The title runs to the line's last character that is not a space or `#` (see HEADING_1).
_HEADING = re.compile(r"^(#{1,6})[ \t]+((?:[ \t#]*+[^ \t#\n])++|.)[ \t#]*+$", re.MULTILINE)


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
