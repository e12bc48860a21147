"""The garden's written grammar, one reader for each mark: wikilinks, embeds, images and Markdown links, headings
and the sections under them, code (fenced blocks and inline), addresses (slugs) and an answer's `[n]` citation
markers. Importing, the pages, the synthesisers, the critics and the quote gate all read text through these.
Pure Python: nothing of the project, no Django.

Every pattern here reads garden or answer text, so each is linear in it: a run of spaces is matched only from its
start and never given back (`[ \t]*+`), and what could rescan a long run runs on RE2."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import defaultdict
from typing import Final
from urllib.parse import unquote

import re2

# The wikilink and image patterns run on RE2, whose matching is linear in the text: with Python's backtracking
# matcher, each `[[` of a long run with no `]]` scans to the end of the run, so the run costs its length squared.
# They need neither lookarounds nor backreferences, which RE2 lacks.
# `[[target]]`, `[[target#Heading]]`, `[[target#^block-id]]`, `[[target|label]]`.
WIKILINK = re2.compile(r"\[\[(?P<target>[^\]|#]+)(?:#(?P<anchor>[^\]|]*))?(?:\|(?P<label>[^\]]+))?\]\]")
# `![[Note]]`, `![[Note#Heading]]`: a note shown inside another (an image embed is an IMAGE_EMBED too).
EMBED = re2.compile(r"!\[\[(?P<target>[^\]|#]+)(?:#(?P<anchor>[^\]|]*))?(?:\|[^\]]*)?\]\]")
# A heading's title runs to the line's last character that is not a space or `#` (a lazy `.+?` before `[ \t#]*$`
# would rescan a run of `#` from every position in it).
_HEADING_TITLE = r"((?:[ \t#]*+[^ \t#\n])++|.)[ \t#]*+$"
# `# Title`, a note's title when its front matter names none.
HEADING_1 = re.compile(rf"^#[ \t]+{_HEADING_TITLE}", re.MULTILINE)
# A heading of any level: `## Stations` (group 1 its marks, group 2 its title).
HEADING = re.compile(rf"^(#{{1,6}})[ \t]+{_HEADING_TITLE}", re.MULTILINE)
# `[text](target.md)` and `[text](target.md#heading)`, relative to the note; not images or web addresses. Neither
# the text nor the target holds a `[`, so each `[` is read up to the next one at most (linear in the note).
MARKDOWN_LINK = re.compile(r"(?<!!)\[([^\[\]]*+)\]\(<?([^)<>\s\[]+?\.md)(#[^)\s>]*+)?>?\)", re.IGNORECASE)
# `[text](address)` to any address, read for its text (group 1): the words a reader sees of a link. On RE2: with
# backtracking, each `[` of a long run with no `](` would rescan the run.
LINK = re2.compile(r"\[([^\]]+)\]\([^)]*\)")
# Images a note may show (raster only: an SVG can carry script), and where it names them: `![[hive-plan.png]]`,
# `![a plan](Attachments/plan.png)`.
IMAGES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".bmp"})
_IMAGE_NAME = rf"[^\]|#()<>\n]+\.(?:{'|'.join(sorted(s[1:] for s in IMAGES))})"
# Files a wikilink may embed that are not notes: `![[hive-plan.png]]` is an attachment, not a missing note.
_OTHER_ATTACHMENTS = ("svg", "pdf", "mp3", "mp4", "m4a", "wav", "ogg", "webm", "mov", "canvas", "excalidraw")
ATTACHMENTS = re.compile(
    rf"\.(?:{'|'.join(sorted(s[1:] for s in IMAGES))}|{'|'.join(_OTHER_ATTACHMENTS)})$", re.IGNORECASE
)
IMAGE_EMBED = re2.compile(
    rf"(?i)!\[\[(?P<target>{_IMAGE_NAME})(?:\|[^\]]*)?\]\]|!\[(?P<alt>[^\]]*)\]\(<?(?P<path>{_IMAGE_NAME})>?\)"
)


def _slug_char(char: str) -> bool:
    # Letters and digits of any script, and the marks that belong to them (Devanagari's vowel signs).
    return char.isalnum() or unicodedata.category(char).startswith("M")


def slugify(value: str) -> str:
    """A readable address for a name in any script: `Sync/Security and privacy` is `sync-security-and-privacy`,
    `Пароли` is `пароли`, `Café` is `café` (NFKC, lower case; every run of anything else is one '-'). For ASCII
    names it is what it always was, so no address a link holds changes."""
    text = unicodedata.normalize("NFKC", value).lower()
    return "-".join("".join(char if _slug_char(char) else " " for char in text).split())


def written_key(target: str) -> str:
    """How a link's target is looked up: case and `.md` do not matter, `%20` is a space, `\\` is `/`."""
    target = unquote(target).strip().replace("\\", "/").lower()
    return target.removesuffix(".md").lstrip("/")


def link_unwrapped(text: str) -> str:
    """A value written as one wikilink (`[[2025-02-22 Sat]]`, a journal page's) as its target; else as it is."""
    text = text.strip()
    return text[2:-2].strip() if text.startswith("[[") and text.endswith("]]") else text


# Marks a heading's words are written with: `[text](address)`, `[[target|text]]`, `**bold**`, `` `code` ``.
_HEADING_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()\s]*(?:\s+\"[^\"]*\")?\)")
_HEADING_WIKILINK = re.compile(r"\[\[([^\[\]|]*)(?:\|([^\[\]]*))?\]\]")
_HEADING_EMPHASIS = re.compile(r"(\*\*|__|~~|==|\*|_|`)(?=\S)(.+?)(?<=\S)\1")


def heading_words(heading: str) -> str:
    """A heading's words without its marks: `[The Twelve-Factor App](https://12factor.net/)` is `The
    Twelve-Factor App`, `[[git/hook]]` is `git/hook`, `**Bold** move` is `Bold move`."""
    text = _HEADING_WIKILINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), heading)
    text = _HEADING_LINK.sub(lambda m: m.group(1), text)
    for _ in range(3):  # nested marks (`**_both_**`), a few levels deep
        text = _HEADING_EMPHASIS.sub(lambda m: m.group(2), text)
    return " ".join(text.split()) or heading.strip()


# A fenced code block runs from a line opening with a fence (```` ``` ````, `~~~` or longer) to the next line that
# is a fence of the same length alone; inline code is `like this`. Their text is left exactly as written.
_FENCE_OPEN = re.compile(r"^[ \t]*+(`{3,}+|~{3,}+)", re.MULTILINE)
_FENCE_ALONE = re.compile(r"^[ \t]*+(`{3,}+|~{3,}+)[ \t]*+$", re.MULTILINE)
_INLINE_CODE = re.compile(r"`[^`\n]++`")


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


def heading_offsets(body: str) -> dict[str, int]:
    """Each heading's title (lower case) -> where the first heading of that title (any level) starts in `body`:
    one scan for every heading a page links to in one note."""
    offsets: dict[str, int] = {}
    for match in HEADING.finditer(without_code(body)):
        offsets.setdefault(match.group(2).strip().lower(), match.start())
    return offsets


def heading_section(body: str, heading: str) -> str | None:
    """The text under the heading `heading`, to the next heading as high or higher; None if there is none."""
    section = _heading_section(body, heading)
    return body[section[1] : section[2]].strip("\n") if section else None


def headings_above(body: str, offset: int) -> list[str]:
    """The headings whose sections hold the passage at `offset` in `body`, outermost first ("Stations",
    "Fellside"): a passage's place in its note. Headings the passage opens with count: its text is under them."""
    text = without_code(body)
    prose = offset
    for match in HEADING.finditer(text, offset):
        if text[prose : match.start()].strip():
            break
        prose = match.end()
    path: list[tuple[int, str]] = []
    for match in HEADING.finditer(text):
        if match.start() > prose:
            break
        level = len(match.group(1))
        path = [(lvl, title) for lvl, title in path if lvl < level]
        path.append((level, match.group(2).strip()))
    return [title for _, title in path]


def _heading_section(body: str, heading: str) -> tuple[int, int, int] | None:
    """(where the heading starts, where its text starts, where its section ends), headings in code ignored."""
    wanted = heading.strip().lower()
    headings = list(HEADING.finditer(without_code(body)))
    for i, match in enumerate(headings):
        if match.group(2).strip().lower() != wanted:
            continue
        level = len(match.group(1))
        end = next((h.start() for h in headings[i + 1 :] if len(h.group(1)) <= level), len(body))
        return match.start(), match.end(), end
    return None


# One marker: up to three-digit numbers separated by commas, semicolons or a (dash) range.
MARKER: Final = re.compile(r"\[(\d{1,3}(?:\s*[,;–-]\s*\d{1,3})*)\]")
# A run of markers after a sentence end ("... in 1889. [2][3]"), with the spaces before each.
TRAILING: Final = re.compile(r"(?:\s*\[\d{1,3}(?:\s*[,;–-]\s*\d{1,3})*\])+")
# Space before punctuation, matched only from the start of its run and never given back: a run not followed by
# punctuation costs its length once, not once per space in it.
_SPACE_BEFORE_PUNCTUATION: Final = re.compile(r"(?<!\s)\s++([.,;:!?])")
_SPACE_RUN: Final = re.compile(r"(?<!\s)\s{2,}+")
# A range covers at most this many numbers; a longer one is two citations joined by a typo ([3-112] is 3 and 112).
RANGE_LIMIT: Final = 50


def marker_numbers(inside: str) -> tuple[int, ...]:
    """The distinct numbers inside one marker's brackets, in order, ranges expanded: "1, 3-5" -> (1, 3, 4, 5)."""
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", inside):
        bounds = [int(bound) for bound in re.split(r"\s*[–-]\s*", part)]
        low, high = bounds[0], bounds[-1]
        span = range(low, high + 1) if 0 < high - low < RANGE_LIMIT else dict.fromkeys((low, high))
        numbers.extend(number for number in span if number not in numbers)
    return tuple(numbers)


def citation_numbers(text: str) -> tuple[int, ...]:
    """The distinct numbers of all the `[n]` markers in `text`, in order of appearance."""
    found: dict[int, None] = {}
    for match in MARKER.finditer(text):
        found.update(dict.fromkeys(marker_numbers(match.group(1))))
    return tuple(found)


def strip_citations(text: str) -> str:
    """`text` without its `[n]` markers, whitespace tidied (the text a judge compares with sources)."""
    cleaned = MARKER.sub("", text)
    cleaned = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", cleaned)
    return _SPACE_RUN.sub(" ", cleaned).strip()
