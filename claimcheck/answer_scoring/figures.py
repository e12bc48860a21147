"""The figures of a text in one normal form each: numbers with their units, dates, times, gradients and codes.

"1,200" and "1200", "two" and "2", "402 m" and "402 metres", "11 November 1972" and "November 11th, 1972",
"WR7 3KV" and "WR73KV" read the same. Pure Python: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Final, Literal

from text.markup import MARKER
from text.words import CARDINALS, MONTH_ABBREVIATIONS, MONTH_NAMES

Kind = Literal["number", "date", "time", "ratio", "code"]

MONTHS: Final = {
    name: number
    for number, month in enumerate(MONTH_NAMES, start=1)
    for name in (month, *(short for short, named in MONTH_ABBREVIATIONS.items() if named == month))
}
NUMBER_WORDS: Final = CARDINALS
# Written units and the one name each stands for; longest first, so "km/h" is not read as "km".
UNITS: Final = {
    "miles per hour": "mph",
    "miles an hour": "mph",
    "per cent": "%",
    "percent": "%",
    "kilometres": "km",
    "kilometers": "km",
    "kilometre": "km",
    "kilometer": "km",
    "millimetres": "mm",
    "millimetre": "mm",
    "metres": "m",
    "meters": "m",
    "metre": "m",
    "meter": "m",
    "gallons": "gal",
    "gallon": "gal",
    "litres": "l",
    "liters": "l",
    "litre": "l",
    "liter": "l",
    "tonnes": "t",
    "tonne": "t",
    "tons": "t",
    "ton": "t",
    "yards": "yd",
    "yard": "yd",
    "miles": "mi",
    "mile": "mi",
    "feet": "ft",
    "foot": "ft",
    "pounds": "GBP",
    "minutes": "min",
    "minute": "min",
    "mins": "min",
    "hours": "h",
    "hour": "h",
    "km/h": "km/h",
    "mph": "mph",
    "psi": "psi",
    "kg": "kg",
    "km": "km",
    "mm": "mm",
    "cm": "cm",
    "ft": "ft",
    "yd": "yd",
    "m": "m",
    "t": "t",
    "l": "l",
    "%": "%",
}
CURRENCIES: Final = {"£": "GBP", "$": "USD", "€": "EUR"}
SCALES: Final = {
    "thousand": 1_000,
    "k": 1_000,
    "million": 1_000_000,
    "m": 1_000_000,
    "bn": 10**9,
    "billion": 10**9,
}
# Numbers in this range with no unit are read as years too: "1972" is stated by "11 November 1972". It stops at
# 2099, one year short of the toolkit's years (text.words.YEARS, which the local judge reads written figures
# with): kept apart so that the answer scoring's results do not move.
YEARS: Final = range(1000, 2100)

_DASHES = re.compile("[\u2010-\u2015\u2212]")
# Month names as written in dates, capitalised: "may" and "march" are also verbs.
_MONTH = "|".join(sorted((name.capitalize() for name in MONTHS), key=len, reverse=True))
_FULL_MONTH = "January|February|March|April|May|June|July|August|September|October|November|December"
_UNIT = "|".join(re.escape(unit) for unit in sorted(UNITS, key=len, reverse=True))
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_ORDINAL = r"(?:st|nd|rd|th)?"
_TENS = "|".join(word for word, number in NUMBER_WORDS.items() if number >= 20)
_ONES = "|".join(word for word, number in NUMBER_WORDS.items() if 0 < number < 10)
_TEENS = "|".join(word for word, number in NUMBER_WORDS.items() if number < 20)

Value = tuple[object, ...]


@dataclass(frozen=True)
class Figure:
    """One figure: its kind and normal form (`value`), with where it was written (not part of equality).

    A number is (amount, unit) with unit "" when it has none; a date is (year, month, day), each None when
    not given; a time is (minutes after midnight,); a ratio (1, n); a code (its letters and digits,)."""

    kind: Kind
    value: Value
    text: str = field(default="", compare=False)
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)


def normalise(text: str) -> str:
    """Dashes as "-", typographic apostrophes and spaces plain, citation markers blanked (same length, so
    positions still point into the text)."""
    text = _DASHES.sub("-", text).replace("\u2019", "'").replace("\u00a0", " ").replace("\u202f", " ")
    return MARKER.sub(lambda m: " " * len(m.group()), text)


def _amount(digits: str, scale: str | None = None) -> Decimal:
    return Decimal(digits.replace(",", "")) * SCALES.get((scale or "").lower(), 1)


def _date(year: str | None, month: str, day: str | None) -> list[Value]:
    number = MONTHS.get(month.lower().rstrip("."), 0) if not month.isdigit() else int(month)
    if not 1 <= number <= 12 or (day and not 1 <= int(day) <= 31):
        return []
    return [(int(year) if year else None, number, int(day) if day else None)]


def _code(m: re.Match[str]) -> list[Value]:
    return [(re.sub(r"[\s.-]", "", m.group()).upper(),)]


def _day_month(m: re.Match[str]) -> list[Value]:
    return _date(m.group(3), m.group(2), m.group(1))


def _month_day(m: re.Match[str]) -> list[Value]:
    return _date(m.group(3), m.group(1), m.group(2))


def _month_year(m: re.Match[str]) -> list[Value]:
    return _date(m.group(2), m.group(1), None)


def _month(m: re.Match[str]) -> list[Value]:
    return _date(None, m.group(1), None)


def _iso(m: re.Match[str]) -> list[Value]:
    return _date(m.group(1), m.group(2), m.group(3))


def _year_span(m: re.Match[str]) -> list[Value]:
    first, second = int(m.group(1)), m.group(2)
    end = int(second) if len(second) == 4 else first // 100 * 100 + int(second)
    end += 100 if end <= first and len(second) == 2 else 0  # 1998-02 ends in 2002
    return [(Decimal(first), ""), (Decimal(end), "")]


def _time(m: re.Match[str]) -> list[Value]:
    hours, minutes, half = int(m.group(1)), int(m.group(2) or 0), (m.group(3) or "").lower()
    if half:
        hours = hours % 12 + (12 if half == "p" else 0)
    return [(hours * 60 + minutes,)] if hours < 24 and minutes < 60 else []


def _ratio(m: re.Match[str]) -> list[Value]:
    return [(1, int(m.group(1)))]


def _money(m: re.Match[str]) -> list[Value]:
    return [(_amount(m.group(2), m.group(3)), CURRENCIES[m.group(1)])]


def _measure(m: re.Match[str]) -> list[Value]:
    return [(_amount(m.group(1), m.group(2)), UNITS.get((m.group(3) or "").lower(), ""))]


def _spelled(m: re.Match[str]) -> list[Value]:
    tens, _, ones = m.group(1).lower().partition("-")
    amount = NUMBER_WORDS[tens] + (NUMBER_WORDS[ones] if ones else 0)
    return [(Decimal(amount), UNITS.get((m.group(2) or "").lower(), ""))]


Reader = Callable[[re.Match[str]], list[Value]]
# Run in this order, each blanking what it read, so that "11 November 1972" is one date and not also the
# numbers 11 and 1972, and "WR7 3KV" one code.
_READERS: Final[list[tuple[re.Pattern[str], Kind, Reader]]] = [
    (re.compile(r"\bNo\. ?\d+\b"), "code", _code),  # a running number: No. 4 is an engine, not a count
    (re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b"), "code", _code),  # a UK postcode
    (re.compile(r"\b\d-\d-\d\b"), "code", _code),  # a wheel arrangement: 0-6-0
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), "date", _iso),
    (
        re.compile(rf"\b(\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?({_MONTH})\b\.?,?(?:\s+(\d{{4}})\b)?"),
        "date",
        _day_month,
    ),
    (
        re.compile(rf"\b({_MONTH})\b\.?\s+(\d{{1,2}}){_ORDINAL}(?!\d)(?:,?\s+(\d{{4}})\b)?"),
        "date",
        _month_day,
    ),
    (re.compile(rf"\b({_MONTH})\b\.?,?\s+(\d{{4}})\b"), "date", _month_year),
    (re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b"), "date", _day_month),
    (re.compile(rf"\b({_FULL_MONTH})\b"), "date", _month),  # a month alone: "from November to March"
    (re.compile(r"\b(\d{4})-(\d{4}|\d{2})\b"), "number", _year_span),  # 1985-87: two years
    (re.compile(r"\b(\d{1,2}):(\d{2})(?:\s?([ap])\.?m\b\.?)?", re.I), "time", _time),
    (re.compile(r"\b(\d{1,2})(?:\.(\d{2}))?\s?([ap])\.?m\b\.?", re.I), "time", _time),
    (re.compile(r"\b1 in (\d{1,3})\b(?![.,]?\d)"), "ratio", _ratio),  # a gradient: 1 in 62
    (re.compile(r"\b[A-Z]{1,3}\d+[A-Z]?\b"), "code", _code),  # a running number: D2187
    (re.compile(r"(?<![\d,.])\b0\d+\b"), "code", _code),  # a leading zero: a telephone number, not an amount
    (
        re.compile(rf"([£$€])\s?({_NUMBER})(?:\s?(thousand|million|billion|bn|k|m)\b)?", re.I),
        "number",
        _money,
    ),
    (
        re.compile(
            rf"(?<![\w.,])({_NUMBER})(?:\s(thousand|million|billion))?(?:[\s-]?({_UNIT})(?![A-Za-z]))?", re.I
        ),
        "number",
        _measure,
    ),
    (
        re.compile(rf"\b((?:{_TENS})(?:-(?:{_ONES}))?|{_TEENS})\b(?:[\s-]({_UNIT})(?![A-Za-z]))?", re.I),
        "number",
        _spelled,
    ),
]


def figures(text: str, *, spelled_one: bool = True) -> list[Figure]:
    """Every figure of `text`, in order of appearance. `spelled_one=False` skips the word "one", which in an
    expected answer is more often a determiner ("one of the four spaces") than a count."""
    work = normalise(text)
    found: list[Figure] = []
    for pattern, kind, read in _READERS:
        for match in pattern.finditer(work):
            if not spelled_one and read is _spelled and match.group(1).lower() == "one":
                continue
            found.extend(
                Figure(kind, value, match.group(), match.start(), match.end()) for value in read(match)
            )
            work = work[: match.start()] + " " * (match.end() - match.start()) + work[match.end() :]
    return sorted(found, key=lambda figure: figure.start)


def blank_figures(text: str) -> str:
    """`text`, normalised, with its figures blanked: what is left for the words."""
    work = normalise(text)
    for figure in figures(text):
        work = work[: figure.start] + " " * (figure.end - figure.start) + work[figure.end :]
    return work


def is_year_amount(amount: object) -> bool:
    """Whether a parsed amount (a whole Decimal) reads as a year."""
    return isinstance(amount, Decimal) and amount == amount.to_integral_value() and int(amount) in YEARS


def states(expected: Figure, found: Iterable[Figure]) -> bool:
    """Whether one of `found` states the `expected` figure: the same amount, in the same unit when the
    expected one has a unit; a date at least as precise as the expected one; a bare year stated by any date
    in that year."""
    for figure in found:
        if expected.kind == "number" and figure.kind == "number":
            (amount, unit), (other, other_unit) = expected.value, figure.value
            if amount == other and (not unit or unit == other_unit):
                return True
        elif expected.kind == "number" and figure.kind == "date":
            amount, unit = expected.value
            if not unit and is_year_amount(amount) and figure.value[0] == amount:
                return True
        elif expected.kind == "date" and figure.kind == "date":
            if all(
                want is None or want == got for want, got in zip(expected.value, figure.value, strict=True)
            ):
                return True
        elif expected.kind == figure.kind and expected.value == figure.value:
            return True
    return False
