"""Gardening syntax: what in a note is its editor's markup rather than its content.

Comments (`%% ... %%`, `<!-- ... -->`) are the editor's own and are dropped; so are block ids (`^abc123` at the
end of a line: a link to one still reaches the note), the `==` of highlights (the words stay) and Dataview or
Logseq fields (`key:: value`). None of it reaches a passage, a claim or a page. Code keeps all of it: in a code
block `%%` is code (`text.markup.code_spans` says where code is). Callouts (`> [!note] Title`) are content and
stay; pages render them as callouts. Pure.
"""

from __future__ import annotations

import re
from typing import Any

from text.markup import code_spans

# Every pattern here reads garden text, so each is linear in it: a run of spaces is matched only from its
# start and never given back (`(?<![ \t])[ \t]*+`), and an opener that finds no close on its line skips the
# rest of the line (no later opener there can close either) instead of being retried at every position.

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
