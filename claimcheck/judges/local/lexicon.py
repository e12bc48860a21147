"""The words the local judge knows by name: stopwords, negations, months, number words and places, with a
crude stemmer and the negation checks built on them. Pure Python."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from text.words import CARDINALS, MONTH_ABBREVIATIONS, MONTH_NAMES, word_set

_WORD_RE = re.compile(r"\d+(?:[.,:/]\d+)*(?:st|nd|rd|th|s)?%?|[A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z]+)?")


# The judge's own list and stemmer, part of its fitted parameters: every feature that the calibration
# (`python -m evaluation.calibration.train`, on the public benchmarks in `../shared/eval`) weighs into `params.json`
# beside this file is counted through them, so they change only with a recalibration. That is why this list is not
# built from text.words.STOP_WORDS (it holds all of them) like the other lists. Negations are left out on
# purpose: a dropped "not" is what the judge looks for.
STOPWORDS = word_set(
    """a about above after again against all also am an and any are aren't as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself of off on once only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves let's
    let it's i'm you're he's she's that's there's what's who's we're they're i've you've we've they've i'd
    you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll s t d ll m re ve y o one's may might
    must shall us ok okay yes yeah oh well really like get got go going gone say says said thing things lot
    lots much many every per via among within upon onto"""
)
_NEGATIONS = word_set(
    """not no never none nobody nothing neither nor without cannot can't don't doesn't didn't isn't aren't
    wasn't weren't won't wouldn't shouldn't couldn't hasn't haven't hadn't mustn't nowhere n't fail fails
    failed unable lack lacks lacked"""
)
_NEGATION_PREFIXES = ("un", "in", "im", "ir", "il", "dis", "non", "mis")
MONTHS = frozenset(MONTH_NAMES) | frozenset(MONTH_ABBREVIATIONS)
NUMBER_WORDS = {word: str(number) for word, number in CARDINALS.items()} | {
    "hundred": "100", "thousand": "1000",
    "million": "1000000", "billion": "1000000000", "first": "1", "second": "2", "third": "3",
    "fourth": "4", "fifth": "5", "sixth": "6", "seventh": "7", "eighth": "8", "ninth": "9", "tenth": "10",
    "once": "1", "twice": "2", "half": "0.5", "dozen": "12", "single": "1", "double": "2", "triple": "3",
}  # fmt: skip
VAGUE_NUMBER_WORDS = frozenset({"hundred", "thousand", "million", "billion", "half", "dozen", "single", "double",
                                "triple"})  # fmt: skip
PLACE_PREPOSITIONS = frozenset({"in", "at", "from", "near", "to", "into", "across", "outside", "inside"})
APPROXIMATELY = frozenset(
    {"about", "around", "roughly", "approximately", "approx", "nearly", "almost", "circa", "c"}
)
_NEGATED_MENTION = (("not",), ("nor",), ("rather", "than"), ("instead", "of"))
# A shorter stem makes false prefix pairs: "unit" is not "un" + "it".
_MIN_ANTONYM_STEM: Final = 5


def split_words(text: str) -> list[tuple[str, int, int]]:
    """Words and numbers of `text` with their character spans."""
    return [(m.group(0), m.start(), m.end()) for m in _WORD_RE.finditer(text)]


def stem(word: str) -> str:
    """A crude, fast English stem (lower-cased) so that inflections match."""
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    for suffix, replacement in (
        ("ies", "y"), ("ied", "y"), ("sses", "ss"), ("ing", ""), ("edly", ""), ("ed", ""), ("ly", ""),
        ("es", ""), ("s", ""),
    ):  # fmt: skip
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + replacement
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word.rstrip("e") if len(word) > 4 else word


def ruled_out(words: Sequence[str], i: int) -> bool:
    """Whether the word at `i` follows "not", "nor", "rather than" or "instead of"."""
    before = tuple(word.lower() for word in words[max(0, i - 2) : i])
    return any(before[-len(phrase) :] == phrase for phrase in _NEGATED_MENTION)


def negated(words: Sequence[str]) -> bool:
    """Whether the words carry an odd number of negation cues (so the statement is negative)."""
    return (
        sum(1 for w in words if w.lower().replace("’", "'") in _NEGATIONS or w.lower().endswith("n't")) % 2
        == 1
    )


def antonym_pairs(claim_stems: Sequence[str], other: frozenset[str]) -> int:
    """Sentence words that are a prefix-negated form of a source word, or the reverse (correct/incorrect)."""
    count = 0
    for claim_stem in claim_stems:
        if claim_stem in other or len(claim_stem) < _MIN_ANTONYM_STEM:
            continue
        for prefix in _NEGATION_PREFIXES:
            if (claim_stem.startswith(prefix) and claim_stem[len(prefix) :] in other) or (
                prefix + claim_stem
            ) in other:
                count += 1
                break
    return count
