"""Figures in a claim: the value of a number, a year or a date, and the other ways a source may write the same
figure (number words, a year range, the twelve-hour clock, metric units, slash dates, a rounding)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import TYPE_CHECKING, Final

from claimcheck.judges.local.lexicon import APPROXIMATELY, NUMBER_WORDS
from text.words import MONTH_NAMES, is_year

if TYPE_CHECKING:
    from claimcheck.judges.local.encoding import Text
    from claimcheck.judges.local.sources import Prepared

# "About" a figure allows a rounding of this much: "roughly 15 km" for 14.5 km, "around 1874" for 1873-1875.
ROUNDING_SHARE: Final = 0.1
ROUNDING_YEARS: Final = 3
_TENS = {word: int(value) for word, value in NUMBER_WORDS.items() if word.endswith("ty")}  # twenty ... ninety
_UNITS = {
    word: int(NUMBER_WORDS[word])
    for word in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
}
# Units of length and mass, in metres and kilograms: "1.2 km" is "1,200 m".
_UNIT_SCALES: dict[str, tuple[str, Decimal]] = {
    **dict.fromkeys(
        ("mm", "millimetre", "millimetres", "millimeter", "millimeters"), ("m", Decimal("0.001"))
    ),
    **dict.fromkeys(("cm", "centimetre", "centimetres", "centimeter", "centimeters"), ("m", Decimal("0.01"))),
    **dict.fromkeys(("m", "metre", "metres", "meter", "meters"), ("m", Decimal(1))),
    **dict.fromkeys(("km", "kilometre", "kilometres", "kilometer", "kilometers"), ("m", Decimal(1000))),
    **dict.fromkeys(("g", "gram", "grams", "gramme", "grammes"), ("kg", Decimal("0.001"))),
    **dict.fromkeys(
        ("kg", "kilogram", "kilograms", "kilogramme", "kilogrammes", "kilo", "kilos"), ("kg", Decimal(1))
    ),
    **dict.fromkeys(("tonne", "tonnes"), ("kg", Decimal(1000))),
}


def number_value(token: str) -> str | None:
    """The normalised value of a numeric token ("1,200" -> "1200", "3.50" -> "3.5", "two" -> "2")."""
    lowered = token.lower()
    if lowered in NUMBER_WORDS:
        return NUMBER_WORDS[lowered]
    if not token[0].isdigit():
        return None
    core = re.sub(r"(?:st|nd|rd|th|s)$", "", lowered).rstrip("%")
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", core):
        core = core.replace(",", "")
    if re.fullmatch(r"\d+\.\d+", core):
        core = core.rstrip("0").rstrip(".")
    return core


def is_written_year(value: str) -> bool:
    """Whether a normalised number, as written, reads as a year: four digits, in the toolkit's years."""
    return value.isdigit() and len(value) == 4 and is_year(int(value))


def _plain_number(value: Decimal) -> str:
    """A number as `number_value` writes it: no exponent, no trailing zeros ("1200", "1.2")."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def slash_date(value: str) -> tuple[tuple[str, str, str], ...]:
    """The (day, month name, year) readings of "14/08/1876": day first, or month first, as written."""
    parts = value.split("/")
    if len(parts) != 3 or not all(part.isdigit() for part in parts) or len(parts[2]) != 4:
        return ()
    return tuple(
        (str(int(day)), MONTH_NAMES[int(month) - 1], parts[2])
        for day, month in ((parts[0], parts[1]), (parts[1], parts[0]))
        if 1 <= int(month) <= 12 and 1 <= int(day) <= 31
    )


def range_end_year(claim: Text, i: int, value: str) -> str | None:
    """The year meant by the end of a range of years written without its century ("75" in "1873-75")."""
    previous = number_value(claim.words[i - 1]) if i else None
    if not (re.fullmatch(r"\d\d", value) and previous and is_written_year(previous)):
        return None
    dashed = re.search(rf"\b{previous}\s*[-\u2013]\s*{value}\b", claim.text)
    return previous[:2] + value if dashed else None


def _other_writings(claim: Text, i: int, value: str) -> set[str]:
    """Other values the figure at `claim.words[i]` may have in a source that writes it another way."""
    words = claim.words
    lowered = words[i].lower()
    previous = words[i - 1].lower() if i else ""
    following = words[i + 1].lower() if i + 1 < len(words) else ""
    found: set[str] = set()
    if year := range_end_year(claim, i, value):
        found.add(year)
    # "twenty-four" or "twenty four" is 24.
    if lowered in _TENS and following in _UNITS:
        found.add(str(_TENS[lowered] + _UNITS[following]))
    if lowered in _UNITS and previous in _TENS:
        found.add(str(_TENS[previous] + _UNITS[lowered]))
    # "4:30pm" is 16:30, "10am" is 10:00.
    clock = re.fullmatch(r"(\d{1,2})(?::(\d\d))?", value)
    if clock and following in {"am", "pm"} and 1 <= int(clock[1]) <= 12:
        hour = int(clock[1]) % 12 + (12 if following == "pm" else 0)
        minute = clock[2] or "00"
        found |= {f"{hour}:{minute}", f"{hour:02d}:{minute}"} | ({str(hour)} if minute == "00" else set())
    # "1.2 km" is 1,200 m (and 1,200,000 mm).
    if following in _UNIT_SCALES and re.fullmatch(r"\d+(?:\.\d+)?", value):
        dimension, scale = _UNIT_SCALES[following]
        found |= {
            _plain_number(Decimal(value) * scale / other)
            for other_dimension, other in set(_UNIT_SCALES.values())
            if other_dimension == dimension
        }
    found.discard(value)
    return found


def _near(value: str, numbers: frozenset[str]) -> bool:
    """Whether a rounded figure is close to one of `numbers`: within ROUNDING_SHARE, or ROUNDING_YEARS of a year."""
    if not re.fullmatch(r"\d+(?:\.\d+)?", value):
        return False
    figure = float(value)
    for number in numbers:
        if not re.fullmatch(r"\d+(?:\.\d+)?", number):
            continue
        years = is_written_year(value), is_written_year(number)
        gap = abs(figure - float(number))
        if (all(years) and gap <= ROUNDING_YEARS) or (
            not any(years) and gap <= ROUNDING_SHARE * max(figure, float(number))
        ):
            return True
    return False


def written_otherwise(claim: Text, i: int, value: str, source: Prepared) -> bool:
    """Whether the figure at `claim.words[i]` is one the source has, written another way or rounded."""
    if _other_writings(claim, i, value) & source.numbers:
        return True
    if i and claim.words[i - 1].lower() in APPROXIMATELY and _near(value, source.numbers):
        return True  # "roughly 15 km" for 14.5 km is a rounding, not another figure
    return any(
        {day, year} <= source.numbers and {month, month[:3]} & source.lower_words
        for day, month, year in slash_date(value)
    )
