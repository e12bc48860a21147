"""Answer synthesis from numbered sources: a model (`ANSWER_PROVIDER`: Claude when an API key is set, or a model
served over the OpenAI API), else the local extractive synthesiser.

Claude's answers are booked against the daily budget the judge spends from too (`settings.ANSWER_BUDGET`):
when what is left cannot cover the most an answer can cost, the extractive synthesiser writes it instead, and
the answer says so (`budget_held`). An anonymous visitor's answer is booked within their own allowance
(`ANONYMOUS_CLAUDE_DAILY_USD`), and with none it is written by the extractive synthesiser without asking Claude.
A served model's answers are booked the same way, at its price (nothing, unless `OPENAI_PRICES` names one); when
one fails, the extractive synthesiser writes the answer instead and the log says why (`SERVED_FAILED`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Generator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.utils.module_loading import import_string

from modelcalls import Budget
from providers.chat import ChatConfig
from providers.claude import claude_config
from providers.openai import openai_config
from providers.timing import phase

logger = logging.getLogger(__name__)

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
    # Why the served model could not write it (`SERVED_FAILED`): the extractive synthesiser wrote it instead.
    model_failed: str = ""
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


SERVED_FAILED = "The served model %s could not write the answer (%s); the local synthesiser wrote it instead."


@dataclass(frozen=True)
class Writer:
    """The model that writes an answer: how it is reached, its name, and the generator the answer records."""

    config: ChatConfig
    model: str
    generator: str

    @property
    def falls_back(self) -> bool:
        """Whether the local synthesiser answers when this model fails: a served model's failure gives the
        reader the extractive answer; Claude's is stored with its message, as it always was."""
        from garden.models import Generator as AnswerGenerator  # as in `writer_for`

        return self.generator == AnswerGenerator.SERVED


def writer_for(*, anonymous: bool) -> Writer | None:
    """The model that writes this asker's answer (`ANSWER_PROVIDER`); None when the local synthesiser writes it."""
    if anonymous and settings.ANONYMOUS_CLAUDE_DAILY_USD <= 0:
        return None  # strangers get no share of the budget unless the operator gives them one
    # Here, not above: the models import answering. (`Generator` here is the typing one.)
    from garden.models import Generator as AnswerGenerator

    if settings.ANSWER_PROVIDER == "openai":
        return Writer(openai_config(), settings.OPENAI_ANSWER_MODEL, AnswerGenerator.SERVED)
    config = claude_config() if settings.ANSWER_PROVIDER == "claude" else None
    return (
        Writer(config, settings.CLAUDE_ANSWER_MODEL, AnswerGenerator.CLAUDE) if config is not None else None
    )


class ModelFailed(Exception):
    """A model that falls back (`Writer.falls_back`) failed before any of its words were given: `failed` is the
    answer it would have stored; the local synthesiser writes it instead."""

    def __init__(self, failed: Synthesis) -> None:
        super().__init__(failed.error)
        self.failed = failed


def _instead(writer: Writer, failed: Synthesis, local: Callable[[], Synthesis]) -> Synthesis:
    """`failed` as the answer stored, or, when `writer` falls back, the local synthesiser's (`local()`)."""
    if not (failed.error and writer.falls_back):
        return failed
    logger.warning(SERVED_FAILED, writer.model, failed.error)
    return dataclasses.replace(local(), model_failed=SERVED_FAILED % (writer.model, failed.error))


def synthesize_streaming(
    question: str,
    sources: Sequence[SourceText],
    question_vector: npt.NDArray[np.float32] | None = None,
    *,
    anonymous: bool = False,
) -> Generator[str, None, Synthesis]:
    """`synthesize`, yielding the answer's text as it is written: a model's a piece at a time
    (`claude.synthesize_streaming`: how a break is stored), the local synthesiser's at once. The caller holds
    the Claude slot (`writer_for` says whether one is needed) for as long as it reads."""
    from garden.answering.synthesis import claude, extractive

    writer = writer_for(anonymous=anonymous)
    if writer is not None:
        try:
            return (
                yield from claude.synthesize_streaming(
                    question, sources, writer, budget=answer_budget(anonymous=anonymous)
                )
            )
        except BudgetSpent:
            written = dataclasses.replace(
                extractive.synthesize(question, sources, question_vector), budget_held=True
            )
        except ModelFailed as failure:
            written = _instead(
                writer, failure.failed, lambda: extractive.synthesize(question, sources, question_vector)
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
    """Answer `question` from `sources`, citing them as [n]. Never raises for an API failure: see `error` (or, for
    a served model, the local synthesiser's answer in its place: `Writer.falls_back`).
    `question_vector` is the question's embedding when retrieval has made it already; `claude_slot` is held
    while a model writes the answer (whatever it raises, e.g. that none is free, goes to the caller);
    `anonymous`: asked by a visitor who is not signed in."""
    from garden.answering.synthesis import claude, extractive

    writer = writer_for(anonymous=anonymous)
    if writer is None:
        return extractive.synthesize(question, sources, question_vector)
    try:
        with claude_slot if claude_slot is not None else nullcontext():
            written = claude.synthesize(question, sources, writer, budget=answer_budget(anonymous=anonymous))
    except BudgetSpent:
        return dataclasses.replace(
            extractive.synthesize(question, sources, question_vector), budget_held=True
        )
    return _instead(writer, written, lambda: extractive.synthesize(question, sources, question_vector))
