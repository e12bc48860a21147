"""What several parts of the product know about English words, written once: word lists written as one string
(`word_set`), the stop words every list shares, the abbreviations after which a full stop ends no sentence, the
months with their abbreviations, the cardinal number words and the years.

A user's list is built from the shared one plus its own named extras, so the difference is visible where it is
used: the critics' (`claimcheck/critics/base.py`), the answer scoring's (`claimcheck/answer_scoring/words.py`), the
extractive answers' (`garden/answering/synthesis/extractive.py`) stop words; the claim splitter's
(`claimcheck/claims.py`) and the passage splitter's (`garden/passages.py`) abbreviations. Code fences are the garden's
grammar (`text.markup`).

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


# The function words all four stop-word lists drop (the judge's, the critics', the answer scoring's, the extractive
# answers'); each adds its own extras to these.
STOP_WORDS: Final = word_set(
    """a about all an and any are as at be been being but by can could did do does each for from had has have her
    his how i if in into is it its may me might must my of on or our shall should so than that the their then there
    these they this those to was we were what when where which who whom why will with would you your"""
)
# Words (lower-case, without their final full stop) after which a full stop ends no sentence, in both the claim
# splitter and the passage splitter; each adds its own extras.
ABBREVIATIONS: Final = word_set(
    """mr mrs ms dr prof st no nos vs etc e.g i.e approx ca cf fig jan feb mar apr jun jul aug sep sept oct nov dec
    mt ft lt col gen capt sgt rev hon jr sr co ltd inc corp dept est u.s u.k a.m p.m"""
)
# The years a four-digit number is read as, 1000 to 2100.
YEARS: Final = range(1000, 2101)


def is_year(number: int) -> bool:
    """Whether a whole number reads as a year."""
    return number in YEARS


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
