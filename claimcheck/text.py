"""The engine's text toolkit: what several of its parts know about English words, written once.

Word lists written as one string (`word_set`), the stop words every list shares, the abbreviations after which a
full stop ends no sentence, the months with their abbreviations, the cardinal number words and the years; and how
garden text is written into a model's prompt as data (`escape_for_prompt`), which the answer writer
(`garden/answering/synthesis/claude.py`) and the Claude judge (`claimcheck/judges/claude.py`) share.
Pure Python: it imports nothing of the project, so any package may use it (the garden too, by an import-linter
exception in pyproject.toml).

A user's list is built from the shared one plus its own named extras, so the difference is visible where it is
used: the critics' (`claimcheck/critics/base.py`), the answer check's (`claimcheck/answer_check/words.py`), the
extractive answers' (`garden/answering/synthesis/extractive.py`) stop words; the claim splitter's
(`claimcheck/claims.py`) and the chunker's (`garden/chunking.py`) abbreviations. Code fences are the garden's grammar (`garden.syntax`).

Lists that are part of fitted parameters stay beside what fitted them and say so: the local judge's stopwords and
stemmer (`claimcheck/judges/local/lexicon.py`) are counted into every feature its calibrated parameters weigh.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final


def word_set(words: str) -> frozenset[str]:
    """A set from a whitespace-separated word list (keeps long vocabularies readable)."""
    return frozenset(words.split())


# The function words all four stop-word lists drop (the judge's, the critics', the answer check's, the extractive
# answers'); each adds its own extras to these.
STOP_WORDS: Final = word_set(
    """a about all an and any are as at be been being but by can could did do does each for from had has have her
    his how i if in into is it its may me might must my of on or our shall should so than that the their then there
    these they this those to was we were what when where which who whom why will with would you your"""
)
# Words (lower-case, without their final full stop) after which a full stop ends no sentence, in both the claim
# splitter and the chunker; each adds its own extras.
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


# How a prompt's data blocks write "<": the system prompts that carry such blocks say so.
ESCAPED_LT: Final = "&lt;"


def escape_for_prompt(text: str) -> str:
    """`text` (a note, a title, a question, a claim) as a prompt's data block carries it: every "<" written as
    `ESCAPED_LT`, so that nothing in it can close its block or open another and pose as the prompt's structure.

    Escaping "<" alone is enough: every block is opened and closed by a tag, and no tag starts without it."""
    return text.replace("<", ESCAPED_LT)


def unescape_from_prompt(text: str, original: str) -> str:
    """`text` a model wrote from escaped blocks, with `ESCAPED_LT` read back as "<"; kept as written when
    `original` (the unescaped text it copied from) really holds "&lt;"."""
    if ESCAPED_LT in text and ESCAPED_LT not in original:
        return text.replace(ESCAPED_LT, "<")
    return text


# The kind of answer a question asks for, and how to tell a sentence that gives one: a year or date for "when",
# a measure for "how long", a figure for "how many" and "how much", a price for what costs, an age for "how
# old", a time of day for "what time", a colour for "what colour". The extractive answers rank a sentence that
# gives it higher; the answerability check (`claimcheck/answerability.py`) wants it.
_MONTH = "|".join(month.title() for month in MONTH_NAMES)
ANSWER_KINDS: Final = tuple(
    (re.compile(asked, re.IGNORECASE), re.compile(given, re.IGNORECASE))
    for asked, given in (
        (
            r"\b(?:when|what year|which year|what date|what day|since when)\b",
            rf"\b(?:1[0-9]\d\d|20\d\d)\b|\b(?-i:{_MONTH})\b",
        ),
        (
            r"\bhow (?:long|tall|high|wide|far|deep|heavy|big|fast|steep)\b|\b(?:length|height|speed|weight)\b",
            r"\d\s?(?:m|km|ft|mph|km/h|tonnes?|tons?|metres?|meters?|miles?|yards?|feet|psi|minutes?|hours?|days?"
            r"|weeks?|months?|years?)\b",
        ),
        (r"\bhow many\b", r"\d|\b(?:" + "|".join(CARDINALS) + r")\b"),
        (r"\bhow much\b(?!.*\b(?:cost|price|fare|pay|charge)s?\b)", r"\d|\bfree\b"),
        (r"\b(?:cost|price|fare)s?\b", r"[£$€]\s?\d|\d\s?p\b|\bfree\b"),
        (r"\bhow old\b|\bage\b", r"\d"),
        (
            r"\bwhat time\b|\bat what hour\b",
            r"\b\d{1,2}[:.]\d\d\b|\b\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.)|\bnoon\b|\bmidday\b",
        ),
        (
            r"\bwhat colou?rs?\b|\bwhich colou?rs?\b|\bwhat livery\b",
            r"\b(?:red|green|blue|black|white|grey|gray|brown|maroon|crimson|cream|yellow|orange|purple|pink|"
            r"silver|gold|livery|liveries)\b",
        ),
    )
)


def asked_kinds(question: str) -> list[re.Pattern[str]]:
    """The patterns of the answers `question` asks for (`ANSWER_KINDS`); empty when it asks for no set kind."""
    return [given for asked, given in ANSWER_KINDS if asked.search(question)]


def gives_kind(kinds: Sequence[re.Pattern[str]], text: str) -> bool:
    """Whether `text` gives an answer of one of `kinds` (those `asked_kinds` found)."""
    return any(kind.search(text) for kind in kinds)
