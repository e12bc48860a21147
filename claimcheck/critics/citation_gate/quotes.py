"""Quoted passages ("...", “...” of at least 12 characters) must be in one of the answer's sources.

A quote is found verbatim, or fuzzily (rapidfuzz `partial_ratio` >= 92 with the quote's numbers and
negations intact), in a cited passage or its whole article; otherwise it is dropped as a fabrication.
Quoted article names are left to the `fabricated_reference` critic. Pure Python: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

from rapidfuzz import fuzz

from claimcheck.critics.base import SourcePassage, blank_code, numbers_in
from claimcheck.critics.citation_gate.items import DROPPED, QUOTE_FOUND, QUOTE_NOT_FOUND, VERIFIED, Item
from claimcheck.critics.fabricated_reference import NAMED_ARTICLE
from text.markup import slugify

FUZZY_QUOTE_SCORE: Final = 92.0
MIN_QUOTE_CHARS: Final = 12

# A curly opener with no close on its line matches up to the next straight quote with neither group set: no
# later curly opener before it can close either, and skipping them keeps the scan linear.
_QUOTE = re.compile(r"\"(?P<straight>[^\"\n]+)\"|“(?:(?P<curly>[^”\n]+)”|[^”\n\"]*+(?=[\n\"]|\Z))")
_CHAR_MAP: Final = str.maketrans(
    {"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "‐": "-", "*": None}
)
_ELLIPSIS = re.compile(r"(?<!\s)\s*+(?:\.\.\.|…|\[\.\.\.\]|\[…\])\s*+")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nor|neither|without|cannot)\b|n't\b")


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.translate(_CHAR_MAP)).strip().casefold()


def audit_quotes(
    answer: str, sources: Mapping[int, SourcePassage], article_slugs: frozenset[str]
) -> Iterator[Item]:
    """One item per quote in the answer's prose, found in a source or dropped as a fabrication."""
    visible = blank_code(answer)
    # Quoted article names ("the article “Funding grants”") are names, not quotations; whether the named
    # article exists is the `fabricated_reference` check's business.
    names = [match.span() for match in NAMED_ARTICLE.finditer(visible)]
    titles = {slugify(source.title) for source in sources.values()} | article_slugs
    haystacks: list[tuple[int, str, str]] = []
    for number, source in sorted(sources.items()):
        haystacks.append((number, "passage", _normalise(source.text)))
        if source.article_text:
            haystacks.append((number, "article", _normalise(source.article_text)))
    for match in _QUOTE.finditer(visible):
        quote = (match.group("straight") or match.group("curly") or "").strip()
        if len(quote) < MIN_QUOTE_CHARS or slugify(quote) in titles:
            continue
        if any(start <= match.start() < end for start, end in names):
            continue
        item = Item(
            kind="quote",
            reference=f"“{quote}”",
            start=match.start(),
            end=match.end(),
            status=DROPPED,
            reason=QUOTE_NOT_FOUND,
            fabricated=True,
        )
        # An elided quote ("the line ... was closed") must have each of its pieces in one source.
        fragments = [_normalise(piece) for piece in _ELLIPSIS.split(quote)]
        fragments = [fragment for fragment in fragments if fragment.strip(" .,;:")]
        for number, where, haystack in haystacks:
            scores = [_find(fragment, haystack) for fragment in fragments]
            found = [score for score in scores if score is not None]
            if fragments and len(found) == len(fragments):
                item.status, item.reason, item.fabricated = VERIFIED, QUOTE_FOUND, False
                item.score = min(found) / 100
                item.found_in = {"source": number, "in": where}
                break
        yield item


def _find(fragment: str, haystack: str) -> float | None:
    """The score (0-100) at which `fragment` is in `haystack`, or None when it is not there."""
    if fragment in haystack:
        return 100.0
    if len(fragment) < MIN_QUOTE_CHARS or len(fragment) > len(haystack):
        return None
    alignment = fuzz.partial_ratio_alignment(fragment, haystack, score_cutoff=FUZZY_QUOTE_SCORE)
    if alignment is None:
        return None
    window = haystack[alignment.dest_start : alignment.dest_end]
    # A changed year or an added "not" scores high but says something else.
    if not numbers_in(fragment) <= numbers_in(window):
        return None
    if len(_NEGATION.findall(fragment)) != len(_NEGATION.findall(window)):
        return None
    return float(alignment.score)
