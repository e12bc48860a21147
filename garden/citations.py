"""The `[n]` citation markers of an answer (`[2]`, `[1, 3]`, `[2-4]`): one reader for the synthesiser, the
chunker, the verifier and the pages. Pure Python: no Django."""

from __future__ import annotations

import re
from typing import Final

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
