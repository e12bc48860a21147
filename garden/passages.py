"""Splitting article bodies into sentences and passages, keeping character offsets into the original text.

Every span `(start, end)` satisfies `text[start:end] == piece`, so any quote can be mapped back to its place.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from text.markup import TRAILING, fenced_blocks
from text.words import ABBREVIATIONS as SHARED_ABBREVIATIONS
from text.words import word_set

# Abbreviations after which a full stop does not end a sentence: the shared ones (text.words) and "max",
# "min". Not the claim splitter's longer list: every stored passage's boundaries rest on this one, and a longer list
# would move some of them (a passage breaks after "vol." today) and so their embeddings at the next import.
ABBREVIATIONS = SHARED_ABBREVIATIONS | word_set("max min")
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s+|$)")
_WORD = re.compile(r"\w")
TARGET_PASSAGE_CHARS = 600
MAX_PASSAGE_CHARS = 900


@dataclass(frozen=True)
class Span:
    start: int
    end: int

    def of(self, text: str) -> str:
        return text[self.start : self.end]


def _is_abbreviation(text: str, dot: int) -> bool:
    """True when the full stop at `dot` closes an abbreviation, an initial or a decimal number."""
    word_start = dot
    while word_start > 0 and (text[word_start - 1].isalpha() or text[word_start - 1] == "."):
        word_start -= 1
    word = text[word_start:dot].lower()
    if word in ABBREVIATIONS or word.rstrip(".") in ABBREVIATIONS:
        return True
    if len(word) == 1 and word.isalpha():  # an initial such as "J. Smith"
        return True
    following = text[dot + 1 : dot + 3]
    return bool(following[:1].isdigit())  # "3.5" never reaches here, but "No. 7" style does


def _trimmed(text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end) if end > start else None


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Sentences of `text[start:end]`; a trailing `[n]` citation stays with the sentence before it.

    The garden's splitter, beside the claim splitter (`claimcheck.claims.split_sentences`), on purpose: a passage
    is a slice of the note as written, heading marks, bullets and table pipes included, so this one cuts only
    at sentence ends and keeps the markup that the claim splitter trims off a claim; every stored passage's
    boundaries (and so its embedding) rest on it.
    """
    end = len(text) if end is None else end
    spans: list[Span] = []
    for line_match in re.finditer(r"[^\n]+", text[start:end]):
        line_start, line_end = start + line_match.start(), start + line_match.end()
        cursor = line_start
        for match in _SENTENCE_END.finditer(text, line_start, line_end):
            stop = match.end()
            single_dot = match.group().startswith(".") and len(match.group().rstrip("\"'”’)]")) == 1
            if single_dot and _is_abbreviation(text, match.start()):
                continue
            next_char = text[stop : stop + 2].strip()[:1]
            if next_char and next_char.islower():
                continue
            citation = TRAILING.match(text, stop, line_end)
            if citation:
                stop = citation.end()
            span = _trimmed(text, cursor, stop)
            if span:
                spans.append(span)
            cursor = stop
        span = _trimmed(text, cursor, line_end)
        if span:
            spans.append(span)
    return spans


def paragraph_spans(text: str, blocks: dict[int, int] | None = None) -> list[Span]:
    """Blocks separated by blank lines; a fenced code block is one block, blank lines and all (`blocks`: the
    text's `text.markup.fenced_blocks`, when the caller has them)."""
    blocks = fenced_blocks(text) if blocks is None else blocks
    fences: list[tuple[int, int]] = []  # the fenced blocks as read from the top, none inside another
    for start, end in sorted(blocks.items()):
        if not fences or start >= fences[-1][1]:
            fences.append((start, end))
    fence_ends = [end for _, end in fences]
    spans: list[Span] = []
    for match in re.finditer(r"\S(?:.|\n(?![ \t]*\n))*", text):
        span = _trimmed(text, match.start(), match.end())
        if span is None:
            continue
        first = bisect_right(fence_ends, span.start)  # the first fence that ends after the span starts
        inside = fences[first] if first < len(fences) and fences[first][0] < span.end else None
        if inside and spans and spans[-1].end > inside[0]:  # the same code block as the block before
            spans[-1] = Span(spans[-1].start, max(spans[-1].end, span.end))
            continue
        spans.append(span)
    return spans


def _is_code(text: str, span: Span, blocks: dict[int, int]) -> bool:
    line_start = text.rfind("\n", 0, span.start) + 1
    return blocks.get(line_start, -1) >= span.end


def _is_table(text: str, span: Span) -> bool:
    return all(line.lstrip().startswith("|") for line in span.of(text).split("\n"))


def _line_spans(text: str, span: Span) -> list[Span]:
    return [Span(span.start + m.start(), span.start + m.end()) for m in re.finditer(r"[^\n]+", span.of(text))]


def _is_heading(text: str, span: Span) -> bool:
    return span.of(text).startswith("#") and "\n" not in span.of(text)


def page_of(pages: Sequence[int], offset: int) -> int | None:
    """The page (1-based) of a paged body (a PDF's) that holds `offset`, given where each page starts; None without pages."""
    return bisect_right(pages, offset) if pages else None


def passage_spans(text: str, pages: Sequence[int] = (), breaks: Sequence[int] = ()) -> list[Span]:
    """Passages of about TARGET_PASSAGE_CHARS: whole paragraphs merged, a long paragraph split at sentences.

    A heading is never left alone at the end of a passage: it starts the passage of the text it heads. A code
    block is never cut (however long), and a long table is cut only between rows. With `pages` (where each
    page starts in `text`, as in a PDF), no passage runs across two pages, so each is cited by its one page;
    with `breaks`, none runs across one (where words another note lends begin and end: decision 0006).
    """
    if not pages and not breaks:
        return _passage_spans(text)
    starts = sorted({*pages, *breaks, *([] if pages else [0])} - {len(text)})
    ends = [*starts[1:], len(text)]
    return [
        Span(start + span.start, start + span.end)
        for start, end in zip(starts, ends, strict=True)
        for span in _passage_spans(text[start:end])
        if _WORD.search(text, start + span.start, start + span.end)  # not a list's bullet left by a break
    ]


def _passage_spans(text: str) -> list[Span]:
    pieces: list[Span] = []
    blocks = fenced_blocks(text)
    for paragraph in paragraph_spans(text, blocks):
        if paragraph.end - paragraph.start <= MAX_PASSAGE_CHARS or _is_code(text, paragraph, blocks):
            pieces.append(paragraph)
            continue
        group_start = group_end = None
        units = (
            _line_spans(text, paragraph)
            if _is_table(text, paragraph)
            else sentence_spans(text, paragraph.start, paragraph.end)
        )
        for sentence in units:
            if (
                group_start is not None
                and group_end is not None
                and sentence.end - group_start > TARGET_PASSAGE_CHARS
            ):
                pieces.append(Span(group_start, group_end))
                group_start = None
            group_start = sentence.start if group_start is None else group_start
            group_end = sentence.end
        if group_start is not None and group_end is not None:
            pieces.append(Span(group_start, group_end))

    passages: list[Span] = []
    current: Span | None = None
    heading_only = False
    for piece in pieces:
        is_heading = _is_heading(text, piece)
        if current is not None and (
            heading_only or (not is_heading and piece.end - current.start <= TARGET_PASSAGE_CHARS)
        ):
            current = Span(current.start, piece.end)
            heading_only = heading_only and is_heading
            continue
        if current is not None:
            passages.append(current)
        current, heading_only = piece, is_heading
    if current is not None:
        passages.append(current)
    return passages
