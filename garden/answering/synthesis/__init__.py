"""Answer synthesis from numbered sources: Claude when an API key is set, else the local extractive synthesiser.

Claude's answers are booked against the daily budget the judge spends from too (`settings.ANSWER_BUDGET`):
when what is left cannot cover the most an answer can cost, the extractive synthesiser writes it instead, and
the answer says so (`budget_held`). An anonymous visitor's answer is booked within their own allowance
(`ANONYMOUS_CLAUDE_DAILY_USD`), and with none it is written by the extractive synthesiser without asking Claude.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Generator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.utils.module_loading import import_string

from providers.claude import Budget, ClaudeConfig, claude_config
from providers.timing import phase

BUDGET_SPENT = (
    "Today's budget for Claude is spent; this answer was composed from the garden's sentences by the local "
    "synthesiser."
)


@dataclass(frozen=True)
class SourceText:
    """Source `[number]` as the synthesiser sees it."""

    number: int
    title: str
    text: str


@dataclass(frozen=True)
class Synthesis:
    text: str
    generator: str
    model: str = ""
    error: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    latency_ms: int = 0
    budget_held: bool = False  # the daily budget could not cover Claude: the extractive synthesiser wrote it
    abstained: bool = False  # the sources are near the question but do not answer it (`abstention_text`)


# What an answer says when the notes are about the question's subject but none says what it asks: a fixed, plain
# form, whoever wrote the answer, naming what the garden does hold; the sources are the nearest passages.
ABSTENTION = (
    "The garden has notes on this ({subjects}), but none of them says what the question asks. The nearest "
    "passages are listed below as its sources."
)
ABSTENTION_SUBJECTS = 3  # notes named in an abstention; the sources list every one
# What Claude writes, and nothing else, when the sources do not answer the question (its prompt says so): the
# answer stored and shown is then the abstention, as the local synthesiser's is.
ABSTAINS = "NOT IN THE NOTES"


def abstains(text: str) -> bool:
    """Whether a model's answer is its abstention (`ABSTAINS`, whatever its case, with nothing but stops after)."""
    return text.strip().rstrip(".!").strip().upper() == ABSTAINS


def abstention_text(sources: Sequence[SourceText]) -> str:
    """The abstention for `sources` (those the asker may see), naming their notes in the order given."""
    titles = list(dict.fromkeys(s.title.rpartition(", p. ")[0] or s.title for s in sources))
    named = [f"“{title}”" for title in titles[:ABSTENTION_SUBJECTS]]
    if len(titles) > len(named):
        named.append(f"{len(titles) - len(named)} more")
    subjects = " and ".join(named) if len(named) < 3 else f"{', '.join(named[:-1])} and {named[-1]}"
    return ABSTENTION.format(subjects=subjects or "its subject")


def abstaining(written: Synthesis, sources: Sequence[SourceText]) -> Synthesis:
    """`written` as the abstention from `sources`: its text the fixed form, what its call cost kept."""
    return dataclasses.replace(written, text=abstention_text(sources), abstained=True)


class BudgetSpent(Exception):
    """What is left of today's budget cannot cover the call: it was not made."""


def answer_budget(*, anonymous: bool = False) -> Budget | None:
    """The budget Claude's answers are booked against, as `config` wires it (`ANSWER_BUDGET`: a dotted path to
    a function that returns one for an `anonymous` visitor's question or not); None when none is configured: no
    limit."""
    path = settings.ANSWER_BUDGET
    return import_string(path)(anonymous=anonymous) if path else None


def claude_for(*, anonymous: bool) -> ClaudeConfig | None:
    """How to reach Claude for this asker's answer; None when the local synthesiser writes it."""
    if anonymous and settings.ANONYMOUS_CLAUDE_DAILY_USD <= 0:
        return None  # strangers get no share of the Claude budget unless the operator gives them one
    return claude_config()


def synthesize_streaming(
    question: str,
    sources: Sequence[SourceText],
    question_vector: npt.NDArray[np.float32] | None = None,
    *,
    anonymous: bool = False,
) -> Generator[str, None, Synthesis]:
    """`synthesize`, yielding the answer's text as it is written: Claude's a piece at a time
    (`claude.synthesize_streaming`: how a break is stored), the local synthesiser's at once. The caller holds
    the Claude slot (`claude_for` says whether one is needed) for as long as it reads."""
    from garden.answering.synthesis import claude, extractive

    config = claude_for(anonymous=anonymous)
    if config is not None:
        try:
            return (
                yield from claude.synthesize_streaming(
                    question, sources, config, budget=answer_budget(anonymous=anonymous)
                )
            )
        except BudgetSpent:
            written = dataclasses.replace(
                extractive.synthesize(question, sources, question_vector), budget_held=True
            )
    else:
        written = extractive.synthesize(question, sources, question_vector)
    if written.text:
        # Written whole already: nothing is cut off.
        with contextlib.suppress(claude.ReaderLeft, claude.StreamTimedOut):
            yield written.text
    return written


@phase("synthesis")
def synthesize(
    question: str,
    sources: Sequence[SourceText],
    question_vector: npt.NDArray[np.float32] | None = None,
    claude_slot: AbstractContextManager[object] | None = None,
    *,
    anonymous: bool = False,
) -> Synthesis:
    """Answer `question` from `sources`, citing them as [n]. Never raises for an API failure: see `error`.
    `question_vector` is the question's embedding when retrieval has made it already; `claude_slot` is held
    while Claude writes the answer (whatever it raises, e.g. that none is free, goes to the caller);
    `anonymous`: asked by a visitor who is not signed in."""
    from garden.answering.synthesis import claude, extractive

    config = claude_for(anonymous=anonymous)
    if config is not None:
        try:
            with claude_slot if claude_slot is not None else nullcontext():
                return claude.synthesize(question, sources, config, budget=answer_budget(anonymous=anonymous))
        except BudgetSpent:
            written = extractive.synthesize(question, sources, question_vector)
            return dataclasses.replace(written, budget_held=True)
    return extractive.synthesize(question, sources, question_vector)
