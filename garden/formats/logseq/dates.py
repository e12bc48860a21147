"""Logseq's date formats (`MMM do, yyyy`): a journal's date written as a title and read back from one."""

from __future__ import annotations

import calendar
import datetime
import re

_MONTHS = [calendar.month_name[i] for i in range(1, 13)]
_DAYS = [calendar.day_name[i] for i in range(7)]
_DATE_TOKEN = re.compile(r"'[^']*'|yyyy|yy|MMMM|MMM|MM|M|do|dd|d|EEEE|EEE|EE|E|[A-Za-z]|.", re.DOTALL)
_KNOWN_TOKENS = {"yyyy", "yy", "MMMM", "MMM", "MM", "M", "do", "dd", "d", "EEEE", "EEE", "EE", "E"}


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def date_format_known(pattern: str) -> bool:
    """Whether `pattern` (date-fns tokens, as Logseq writes them) holds only tokens this module knows."""
    tokens = _DATE_TOKEN.findall(pattern)
    return any(t in _KNOWN_TOKENS for t in tokens) and not any(
        t.isalpha() and t not in _KNOWN_TOKENS for t in tokens
    )


def date_formatted(date: datetime.date, pattern: str) -> str:
    """`date` written in `pattern` (`MMM do, yyyy` is `Jul 19th, 2021`), English names as Logseq's default."""
    shown = {
        "yyyy": f"{date.year:04d}",
        "yy": f"{date.year % 100:02d}",
        "MMMM": _MONTHS[date.month - 1],
        "MMM": _MONTHS[date.month - 1][:3],
        "MM": f"{date.month:02d}",
        "M": str(date.month),
        "do": _ordinal(date.day),
        "dd": f"{date.day:02d}",
        "d": str(date.day),
        "EEEE": _DAYS[date.weekday()],
        "EEE": _DAYS[date.weekday()][:3],
        "EE": _DAYS[date.weekday()][:3],
        "E": _DAYS[date.weekday()][:3],
    }
    return "".join(
        shown.get(token, token[1:-1] if token.startswith("'") and len(token) > 1 else token)
        for token in _DATE_TOKEN.findall(pattern)
    )


def date_parsed(text: str, pattern: str) -> datetime.date | None:
    """The date `text` writes in `pattern`, or None."""
    parts = {
        "yyyy": r"(?P<year>\d{4})",
        "yy": r"(?P<year2>\d{2})",
        "MMMM": r"(?P<month_name>[A-Za-z]+)",
        "MMM": r"(?P<month_abbr>[A-Za-z]{3})",
        "MM": r"(?P<month>\d{2})",
        "M": r"(?P<month>\d{1,2})",
        "do": r"(?P<day>\d{1,2})(?:st|nd|rd|th)",
        "dd": r"(?P<day>\d{2})",
        "d": r"(?P<day>\d{1,2})",
        "EEEE": r"[A-Za-z]+",
        "EEE": r"[A-Za-z]+",
        "EE": r"[A-Za-z]+",
        "E": r"[A-Za-z]+",
    }
    seen: set[str] = set()
    regex = []
    for token in _DATE_TOKEN.findall(pattern):
        part = parts.get(token)
        if part is None:
            regex.append(re.escape(token[1:-1] if token.startswith("'") and len(token) > 1 else token))
            continue
        group = re.search(r"\?P<(\w+)>", part)
        if group is not None:
            if group.group(1) in seen:
                part = part.replace(f"?P<{group.group(1)}>", "?:")
            seen.add(group.group(1))
        regex.append(part)
    match = re.fullmatch("".join(regex), text.strip(), re.IGNORECASE)
    if match is None:
        return None
    found = match.groupdict()
    names = [name.lower() for name in _MONTHS]
    try:
        year = int(found["year"]) if found.get("year") else 2000 + int(found.get("year2") or "x")
        if found.get("month"):
            month = int(found["month"])
        elif found.get("month_name"):
            month = names.index(found["month_name"].lower()) + 1
        else:
            month = [name[:3] for name in names].index((found.get("month_abbr") or "").lower()) + 1
        return datetime.date(year, month, int(found.get("day") or "x"))
    except ValueError:
        return None
