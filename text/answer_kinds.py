"""The kind of answer a question asks for (a year, a measure, a figure, a price, an age, a time, a colour) and
whether a sentence gives one: the extractive answers (`garden/answering/synthesis/extractive.py`) rank a sentence
that gives it higher, and the answerability check (`claimcheck/answerability.py`) wants it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from text.words import CARDINALS, MONTH_NAMES

# (what a question asks, what a sentence that answers it holds), one pair a kind: a year or date for "when", a
# measure for "how long", a figure for "how many" and "how much", a price for what costs, an age for "how old", a
# time of day for "what time", a colour for "what colour".
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
