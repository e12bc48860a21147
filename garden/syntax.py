"""The garden's written grammar, one reader for each mark: wikilinks, embeds, images and Markdown links, headings,
addresses (slugs) and an answer's `[n]` citation markers. Importing, the pages, the synthesisers, the critics and
the quote gate all read text through these. Pure Python: no Django, nothing else of the garden."""

from __future__ import annotations

import re
import unicodedata
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
# The title runs to the line's last character that is not a space or `#` (a lazy `.+?` before `[ \t#]*$` would
# rescan a run of `#` from every position in it).
HEADING_1 = re.compile(r"^#[ \t]+((?:[ \t#]*+[^ \t#\n])++|.)[ \t#]*+$", re.MULTILINE)
# `[text](target.md)` and `[text](target.md#heading)`, relative to the note; not images or web addresses. Neither
# the text nor the target holds a `[`, so each `[` is read up to the next one at most (linear in the note).
MARKDOWN_LINK = re.compile(r"(?<!!)\[([^\[\]]*+)\]\(<?([^)<>\s\[]+?\.md)(#[^)\s>]*+)?>?\)", re.IGNORECASE)
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
