"""Shared types of the critics, and the small text helpers several critics use.

A critic is a `Critic`: a name and a severity fixed in code, wrapped around a function that only says whether
the answer passed, why, and the specifics. The function never builds the `CriticResult` itself, so nothing in
the answer (or in a model's output) can change a critic's name or severity. Pure Python: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from claimcheck.terms import Severity
from text.markup import MARKER, marker_numbers
from text.words import STOP_WORDS, word_set

__all__ = [
    "FENCED_CODE",
    "ConstraintRules",
    "Critic",
    "CriticInput",
    "CriticResult",
    "Finding",
    "Severity",
    "SourcePassage",
    "Words",
    "blank_code",
    "citation_markers",
    "content_words",
    "numbers_in",
    "plural",
]


@dataclass(frozen=True)
class SourcePassage:
    """One numbered source the answer was given: the cited passage, and the whole current article body."""

    number: int
    article_slug: str
    title: str
    text: str
    article_text: str = ""


@dataclass(frozen=True)
class ConstraintRules:
    """Operator rules for answers; `min_citations=0` and `None` limits disable a rule."""

    min_citations: int = 1
    max_chars: int | None = 3000
    min_chars: int | None = None
    forbidden_phrases: tuple[str, ...] = ()


@dataclass(frozen=True)
class CriticInput:
    """Everything a check may look at: the answer, its numbered sources and what exists in the garden."""

    answer: str
    sources: Mapping[int, SourcePassage]
    article_slugs: frozenset[str]
    source_tree: Path | None = None
    rules: ConstraintRules = field(default_factory=ConstraintRules)


@dataclass(frozen=True)
class CriticResult:
    """One critic's verdict; `error` is set (and `passed` True) when the critic itself crashed."""

    critic: str
    severity: Severity
    passed: bool
    message: str
    details: dict[str, Any]
    error: str = ""
    latency_ms: float = 0.0


@dataclass(frozen=True)
class Finding:
    """What a critic's function reports: everything in a result except what the `Critic` fixes."""

    passed: bool
    message: str
    details: dict[str, Any]


class Critic:
    """A named rule with a fixed severity; calling it runs the rule and stamps its name and severity."""

    __slots__ = ("_evaluate", "name", "severity")

    def __init__(self, name: str, severity: Severity, evaluate: Callable[[CriticInput], Finding]) -> None:
        self.name: Final = name
        self.severity: Final = Severity(severity)  # ValueError for an unknown one
        self._evaluate = evaluate

    def __call__(self, critic_input: CriticInput) -> CriticResult:
        finding = self._evaluate(critic_input)
        return CriticResult(
            critic=self.name,
            severity=self.severity,
            passed=finding.passed,
            message=finding.message,
            details=finding.details,
        )

    def __repr__(self) -> str:
        return f"Critic({self.name!r}, {self.severity!r})"


# A fenced code block; an unclosed fence runs to the end of the text, as Markdown renders it. Not the garden's
# reader (text.markup.fenced_blocks, code_spans) on purpose: in a note an unclosed fence is no block (the note is
# stored and chunked as written), while an answer is read as it is shown, where an unclosed fence hides the rest as
# code. The inline spans below differ too: a run of several backticks opens them, where the garden's take one.
FENCED_CODE: Final = re.compile(
    r"^[ \t]*(```|~~~)[^\n]*\n(?P<body>.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE
)
_BACKTICKS = re.compile(r"`+")


def inline_code_spans(text: str) -> list[tuple[int, int]]:
    """Inline code as the pattern `` (`+)[^`\n].*?\1 `` finds it, in one pass: from a run of backticks (from its
    last characters, when only a shorter run closes it later on the line) to the first later run on its line
    at least that long. The pattern itself retries every position of a run and rescans the line from each."""
    runs = [match.span() for match in _BACKTICKS.finditer(text)]
    longest_after = [0] * len(runs)  # the longest run after each, on its line
    longest = 0
    for i in range(len(runs) - 1, 0, -1):
        longest_after[i] = longest
        same_line = text.find("\n", runs[i - 1][1], runs[i][0]) < 0
        longest = max(longest, runs[i][1] - runs[i][0]) if same_line else 0
    if runs:
        longest_after[0] = longest
    spans: list[tuple[int, int]] = []
    cursor = i = 0
    while i < len(runs):
        start, end = max(runs[i][0], cursor), runs[i][1]
        length = min(end - start, longest_after[i])
        if length <= 0 or end >= len(text) or text[end] == "\n":
            i += 1
            continue
        i += 1
        while runs[i][1] - runs[i][0] < length:
            i += 1
        spans.append((end - length, runs[i][0] + length))
        cursor = spans[-1][1]
    return spans


def blank_code(text: str, *, fenced: bool = True, inline: bool = True) -> str:
    """`text` with code replaced by spaces (newlines kept), so offsets into it are offsets into `text`."""

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    if fenced:
        # Fenced blocks first so that the backticks of a fence are not read as inline code.
        text = FENCED_CODE.sub(blank, text)
    if inline:
        pieces, cursor = [], 0
        for start, end in inline_code_spans(text):  # inline code holds no newline
            pieces += [text[cursor:start], " " * (end - start)]
            cursor = end
        text = "".join([*pieces, text[cursor:]])
    return text


def citation_markers(text: str) -> list[tuple[int, int, tuple[int, ...]]]:
    """The `[n]` markers of `text` outside code as (start, end, numbers), ranges expanded.

    A bracketed number followed by `(` is link text and one opening a line before `:` is a link
    definition, so neither counts as a citation.
    """
    visible = blank_code(text)
    markers = []
    for match in MARKER.finditer(visible):
        after = visible[match.end() : match.end() + 1]
        line_start = match.start() == 0 or visible[match.start() - 1] == "\n"
        if after == "(" or (line_start and after == ":"):
            continue
        markers.append((match.start(), match.end(), marker_numbers(match.group(1))))
    return markers


# The critics' list, apart from the judge's (claimcheck/judges/local/lexicon.py, fitted with its parameters): the
# shared stop words, more glue, and the words an answer uses about its sources ("according", "article", "says"),
# which support nothing; applied with its own lighter stemmer alike to the answer and the passage it cites.
_STOPWORDS: Final = (
    STOP_WORDS
    | word_set(
        """above after again against also although am because before below between both doing down during few
        further having he here hers herself him himself however itself just more most myself no nor not off once
        only other ours ourselves out over own per same she some such theirs them themselves therefore though
        through thus too under until up us very via whereas whether while yet yours yourself yourselves"""
    )
    | word_set(
        """according article articles describe described describes explain explained explains garden mention
        mentioned mentions note noted notes said says source sources state stated states"""
    )
)
_WORD = re.compile(r"[^\W_]+")
# Identifiers in code: runs of capitals, capitalised words, lower-case words and digits.
_SUBWORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass(frozen=True)
class Words:
    """The content words (stemmed, lower-case) and the numbers of a piece of text."""

    words: frozenset[str]
    numbers: frozenset[str]

    def support(self, other: Words, *, numbers: bool = True) -> float:
        """Share of these content words found in `other` (1.0 when there are none).

        With `numbers` (the default) it is 0.0 when one of these numbers is not in `other`.
        """
        if numbers and not self.numbers <= other.numbers:
            return 0.0
        if not self.words:
            return 1.0
        return len(self.words & other.words) / len(self.words)

    def __or__(self, other: Words) -> Words:
        return Words(self.words | other.words, self.numbers | other.numbers)


def _stem(word: str) -> str:
    """A crude suffix strip, applied alike to both sides of a comparison (stones/stone, opened/opening)."""
    if word.isdigit() or len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("ing") and len(word) >= 6:
        word = word[:-3]
    elif word.endswith("ed") and len(word) >= 5:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def content_words(text: str, *, code: bool = False) -> Words:
    """The content words and numbers of `text`; `code=True` also splits identifiers (snake and camel case)."""
    text = text.replace("’", "'")
    text = re.sub(r"'s\b", "", text)
    if code:
        tokens = [part for token in _WORD.findall(text) for part in _SUBWORD.findall(token)]
        tokens += [token.replace("_", "") for token in re.findall(r"\w+", text) if "_" in token]
    else:
        tokens = _WORD.findall(text)
    words = frozenset(
        _stem(token.lower())
        for token in tokens
        if len(token) > 1 and not token.isdigit() and token.lower() not in _STOPWORDS
    )
    return Words(words=words, numbers=numbers_in(text))


def numbers_in(text: str) -> frozenset[str]:
    """The numbers written in `text`, with thousands separators removed (1,200 and 1200 are the same)."""
    found = set()
    for number in _NUMBER.findall(text):
        found.add(re.sub(r",(?=\d{3}\b)", "", number))
    return frozenset(found)


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """`count` with the noun in the right number: "1 citation", "2 citations"."""
    noun = singular if count == 1 else (plural_form or singular + "s")
    return f"{count} {noun}"
