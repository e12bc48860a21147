"""Whether an answer states the expected fact of a golden question.

The rule: an answer states the expected fact when it gives every figure of the expected answer (numbers with
their units, dates, times, codes; read in any common written form) and a clear majority of its key terms
(names and content words). What the question itself says counts for nothing, so an answer cannot pass by
repeating it. A parenthetical in the expected answer is an aside or another phrasing ("402 m (about 440
yards)"), not required, unless the rest names only what the question names ("Brackenford (210 m) is longer
than Millbridge (180 m)"). For an outdated question the answer must also not give the superseded fact as
current; out of scope, declining is the answer; in scope, a refusal answers nothing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from claimcheck.answer_scoring.figures import Figure, figures, is_year_amount, normalise, states
from claimcheck.answer_scoring.words import Term, key_terms, stems
from claimcheck.claims import split_sentences

# A clear majority of the key terms must be there: one in three may be put another way ("moved" for
# "dismantled and re-erected"), but an answer missing most of the names and words is about something else.
MIN_KEY_TERM_SHARE: Final = 2 / 3
# How an answer says it has nothing on the question (the garden's refusal, or a model saying so).
DECLINES: Final = re.compile(
    r"\b(?:(?:don't|do not) have (?:any )?(?:material|information)|can(?:'t|not| not) answer"
    r"|(?:sources?|garden|articles?|notes?) (?:don't|do not|doesn't|does not) (?:cover|say|mention|contain)"
    r"|no information|(?:is|are) not covered|I (?:don't|do not) know)\b",
    re.I,
)
# Words that put a fact in the past ("was £14.00", "until February 2024"): a superseded fact so told is
# history, not a claim that it still holds.
PAST: Final = re.compile(
    r"\b(?:was|were|had|used to|previously|formerly|former|earlier|before|until|no longer|replaced|succeeded"
    r"|superseded|retired|up from|down from|rose from|then|prior|old|last year)\b",
    re.I,
)
_PARENTHETICAL = re.compile(r"\(([^()]*)\)")
_NEXT_WORD = re.compile(r"[\s-]+([A-Za-z]+)")
_NAME_AFTER = re.compile(r" (?:[A-Z][A-Za-z']*(?: |$|(?=[^A-Za-z])))+")


@dataclass(frozen=True)
class FigureFact:
    """A figure the answer must give, as written in the expected answer, and the ways of giving it: each way
    is a set of figures that must all be stated ("402 m", or "440 yards"; "23.5 tonnes", or both "61.5
    tonnes" and "38 tonnes")."""

    text: str
    ways: tuple[tuple[Figure, ...], ...]

    @property
    def figure(self) -> Figure:
        return self.ways[0][0]

    def stated_by(self, found: list[Figure]) -> bool:
        return any(all(states(figure, found) for figure in way) for way in self.ways)


@dataclass(frozen=True)
class KeyFacts:
    """What an answer must say: every figure and a clear majority of the terms."""

    figures: tuple[FigureFact, ...]
    terms: tuple[Term, ...]

    @property
    def empty(self) -> bool:
        return not self.figures and not self.terms


@dataclass(frozen=True)
class AnswerScore:
    """Whether an answer states the expected fact (None: there is no expected fact to compare with), what it
    lacks, as written in the expected answer, and the sentence that gives an outdated fact as current."""

    answers: bool | None
    missing: tuple[str, ...] = ()
    outdated: str = ""


def key_facts(expected: str, *, question: str = "") -> KeyFacts:
    """The figures and key terms of an expected answer, leaving out what the question already says."""
    text = normalise(expected)
    asides = [(m.start(), m.end()) for m in _PARENTHETICAL.finditer(text)]
    known_figures = figures(question)
    known_words = stems(question)
    facts = _facts(text, asides, known_figures, known_words)
    return _facts(text, [], known_figures, known_words) if facts.empty and asides else facts


def _facts(
    text: str, asides: list[tuple[int, int]], known_figures: list[Figure], known_words: frozenset[str]
) -> KeyFacts:
    def aside_of(figure: Figure) -> tuple[int, int] | None:
        return next(((start, end) for start, end in asides if start <= figure.start < end), None)

    every = figures(text, spelled_one=False)
    blanks = [*asides, *((figure.start, figure.end) for figure in every)]
    facts: list[FigureFact] = []
    for figure in every:
        if aside_of(figure) or states(figure, known_figures) or _names_known(figure, text, known_words):
            continue
        if any(fact.figure == figure for fact in facts):
            continue
        ways: list[tuple[Figure, ...]] = [(figure,)]
        # "402 m (about 440 yards)": a measure right after it in other units says the same.
        aside = next(
            ((s, e) for s, e in asides if s >= figure.end and not text[figure.end : s].strip()), None
        )
        inside = [other for other in every if aside is not None and aside_of(other) == aside]
        if len(inside) == 1 and _measure(figure) and _measure(inside[0]):
            ways.append((inside[0],))
        worked_out = _operands(figure, every, text)
        if worked_out:
            ways.append(worked_out)
            after = _NEXT_WORD.match(text, figure.end)  # "times", "heavier": part of the working out
            blanks += [after.span(1)] if after else []
        facts.append(FigureFact(figure.text, tuple(ways)))
    words = text
    for start, end in blanks:
        words = words[:start] + " " * (end - start) + words[end:]
    return KeyFacts(tuple(facts), tuple(key_terms(words, known=known_words)))


def _names_known(figure: Figure, text: str, known_words: frozenset[str]) -> bool:
    """Whether `figure` is the running number of something the question names ("No. 7821 River Kest" when the
    question asks about River Kest): the question's subject, not a fact of the answer."""
    name = _NAME_AFTER.match(text, figure.end)
    return figure.text.startswith("No.") and name is not None and stems(name.group()) <= known_words


def _operands(figure: Figure, every: list[Figure], text: str) -> tuple[Figure, Figure] | None:
    """The two figures of the expected answer that `figure` is worked out from, if it is: a difference ("23.5
    tonnes heavier" than 61.5 and 38 tonnes, "three years older" for 1894 and 1897) or, before "times", a
    rounded ratio ("nearly three times" £410,000 against £146,000). An answer that gives both gives it."""
    if figure.kind != "number":
        return None
    amount, unit = figure.value
    after = _NEXT_WORD.match(text, figure.end)
    times = after is not None and after.group(1).lower() == "times"
    for first in every:
        for second in every:
            if first is second or figure in (first, second) or not first.kind == second.kind == "number":
                continue
            (a, a_unit), (b, b_unit) = first.value, second.value
            if a_unit != b_unit or not isinstance(a, Decimal) or not isinstance(b, Decimal):
                continue
            if times and b and round(a / b) == amount:
                return first, second
            same_unit = unit == a_unit if unit else is_year_amount(a) and is_year_amount(b)
            if not times and same_unit and a - b == amount:
                return first, second
    return None


def _measure(figure: Figure) -> bool:
    return figure.kind == "number" and bool(figure.value[1])


def _missing(facts: KeyFacts, text: str) -> tuple[str, ...]:
    """What `text` lacks of `facts`: every figure it does not state, and the terms it lacks when it has less
    than a clear majority of them."""
    found, words = figures(text), stems(text)
    missing = [fact.text for fact in facts.figures if not fact.stated_by(found)]
    lacking = [term.text for term in facts.terms if not term.found_in(words)]
    if len(facts.terms) - len(lacking) < math.ceil(MIN_KEY_TERM_SHARE * len(facts.terms) - 1e-9):
        missing += lacking
    return tuple(missing)


def _superseded(answer: str, *, expected: str, outdated_fact: str, question: str) -> str:
    """The sentence of `answer` that gives the outdated fact as current, or ""."""
    current = key_facts(expected, question=question)
    old = key_facts(outdated_fact, question=question)
    current_figures = figures(expected)
    current_words = stems(expected)
    distinct = KeyFacts(
        tuple(fact for fact in old.figures if not states(fact.figure, current_figures)),
        tuple(term for term in old.terms if not set(term.stems) <= current_words),
    )
    if distinct.empty:
        return ""
    current_names = [term for term in current.terms if term.name]
    for start, end in split_sentences(answer):
        sentence = answer[start:end]
        if _missing(distinct, sentence):
            continue
        found, words = figures(sentence), stems(sentence)
        beside_current = any(fact.stated_by(found) for fact in current.figures) or any(
            term.found_in(words) for term in current_names
        )
        if not beside_current and not PAST.search(sentence):
            return sentence
    return ""


def score_answer(
    *,
    answer: str,
    expected: str | None,
    question: str = "",
    in_scope: bool = True,
    refused: bool = False,
    outdated_fact: str | None = None,
) -> AnswerScore:
    """Whether `answer` states the `expected` fact of its question (see the module's docstring for the rule).

    `refused` is the garden's refusal (no material retrieved); `outdated_fact` the superseded fact of an
    "outdated" question."""
    if not in_scope:
        return AnswerScore(refused or bool(DECLINES.search(normalise(answer))))
    facts = key_facts(expected or "", question=question)
    if facts.empty:
        return AnswerScore(None)
    missing = _missing(facts, "" if refused else answer)
    if missing:
        return AnswerScore(False, missing)
    if outdated_fact:
        sentence = _superseded(
            answer, expected=expected or "", outdated_fact=outdated_fact, question=question
        )
        if sentence:
            return AnswerScore(False, outdated=sentence)
    return AnswerScore(True)
