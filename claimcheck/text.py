"""The engine's text toolkit: what several of its parts know about English words, written once.

Word lists written as one string (`word_set`), the months with their abbreviations, and the cardinal number words.
Pure Python: it imports nothing of the project, so any package may use it.

Lists that are part of fitted parameters stay beside what fitted them and say so: the local judge's stopwords and
stemmer (`claimcheck/judges/local/lexicon.py`) are counted into every feature its calibrated parameters weigh.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final


def word_set(words: str) -> frozenset[str]:
    """A set from a whitespace-separated word list (keeps long vocabularies readable)."""
    return frozenset(words.split())


MONTH_NAMES: Final = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
                      "october", "november", "december")  # fmt: skip
# Abbreviation -> month name; "may" has none (it is its own).
MONTH_ABBREVIATIONS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "jan": "january",
        "feb": "february",
        "mar": "march",
        "apr": "april",
        "jun": "june",
        "jul": "july",
        "aug": "august",
        "sep": "september",
        "sept": "september",
        "oct": "october",
        "nov": "november",
        "dec": "december",
    }
)
# zero ... nineteen, then twenty ... ninety, in that order.
CARDINALS: Final[Mapping[str, int]] = MappingProxyType(
    {
        word: number
        for number, word in enumerate(
            [
                "zero",
                "one",
                "two",
                "three",
                "four",
                "five",
                "six",
                "seven",
                "eight",
                "nine",
                "ten",
                "eleven",
                "twelve",
                "thirteen",
                "fourteen",
                "fifteen",
                "sixteen",
                "seventeen",
                "eighteen",
                "nineteen",
            ]
        )
    }
    | {
        word: 10 * tens
        for tens, word in enumerate(
            ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"], 2
        )
    }
)
