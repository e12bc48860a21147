"""An answer as a client shows it: its text, sources, citations, pre-flight and where its check stands; a
conversation's turns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, PlainSerializer

from claimcheck.terms import RiskLabel, Verdict
from dashboard.shapes.fields import (
    ANSWERS_QUESTION_LABEL,
    ANSWERS_QUESTION_RULE,
    CITED_AS,
    PAGE_ONLY,
    label,
    rounded,
)
from dashboard.shapes.verdicts import VerdictOut, VerificationOut
from garden.models import Answer, Conversation, Generator, Passage, SearchRule
from garden.readers import Reader
from garden.selectors import answer_links_hidden, answer_searched_for, passages_shown
from verifier.models import FINISHED
from verifier.selectors import (
    answers_label,
    answers_question,
)


# An article retrieval found, with its score.
@dataclass(frozen=True)
class SourceOut:
    article: str
    title: str
    # The page shows the score to 3 places from the full value; the API has always sent 4.
    score: Annotated[float, PlainSerializer(rounded, return_type=float)]
    url: Annotated[str, PAGE_ONLY]


# Source n as the answer cites it: `[n]` links to `url`, the passage.
@dataclass(frozen=True, kw_only=True)
class CitationOut:
    number: int
    article: str
    title: str
    page: Annotated[
        int | None, Field(description="The page of a PDF the passage is on; null for a note.")
    ] = None
    cited_as: Annotated[str, Field(description=CITED_AS)]
    passage: str
    url: str


@dataclass(frozen=True)
class TopicOut:
    """A topic the question matched (the API sends its slug)."""

    title: str
    url: str


@dataclass(frozen=True)
class PreflightOut:
    domain: str
    risk: str
    suggestion: str


@dataclass(frozen=True)
class UsageOut:
    input_tokens: int
    output_tokens: int
    cost_usd: str
    latency_ms: int


# Everything a client needs to show an answer.
@dataclass(frozen=True, kw_only=True)
class AnswerOut:
    question_id: int
    answer_id: Annotated[
        str, Field(description="The answer's address: a random id, as in /answers/{answer_id}/.")
    ]
    question: str
    conversation: Annotated[
        str | None,
        Field(
            description="The conversation this answer is a turn of: pass it as `conversation` to POST /api/ask "
            "to ask a follow-up in it. Given to the conversation's owner only (null for anyone else given the "
            "answer's id: the conversation's id would show its later turns)."
        ),
    ]
    turn: Annotated[int, Field(description="The answer's place in its conversation, from 1.")]
    searched_for: Annotated[
        str | None,
        Field(
            description="What retrieval searched for when it was not the question's own words: a follow-up "
            "carries its conversation's subject, or Claude rewrote it as a standalone question. Null also when "
            "a turn before it is one the caller may not see, whose words it would repeat."
        ),
    ]
    refused: bool
    refusal_reason: str | None
    abstained: Annotated[
        bool,
        Field(
            description="The notes were near the question but none said what it asks: the answer says so and "
            "names the notes it looked in (an abstention; no claims to check)."
        ),
    ]
    answers_question: Annotated[bool, Field(description=ANSWERS_QUESTION_RULE)]
    answers_question_label: Annotated[str, Field(description=ANSWERS_QUESTION_LABEL)]
    answer: str
    error: str | None
    generator: str
    budget_held: Annotated[
        bool,
        Field(description="Today's Claude budget was spent, so the local synthesiser wrote this answer."),
    ]
    model_failed: Annotated[
        str | None,
        Field(
            description="Why the served model could not write this answer: the local synthesiser wrote it."
        ),
    ]
    model: str | None
    sources: list[SourceOut]
    citations: list[CitationOut]
    topics: list[str]
    themes: list[str]
    preflight: PreflightOut
    usage: UsageOut
    verification: VerificationOut
    searched_how: Annotated[str, PAGE_ONLY]  # the search rule's label, e.g. "its own words with ..."
    topics_matched: Annotated[list[TopicOut], PAGE_ONLY]
    themes_hit: Annotated[list[str], PAGE_ONLY]  # their titles
    verdict: Annotated[VerdictOut | None, PAGE_ONLY]  # built only when asked for (`answer_shape`)

    @property
    def generator_label(self) -> str:
        return label(Generator, self.generator)

    @property
    def failed(self) -> bool:
        return bool(self.error)


def answer_shape(answer: Answer, *, reader: Reader, verdict: VerdictOut | None = None) -> AnswerOut:
    """The shape of `answer`, which `answer_get` has loaded, as `reader` is shown it (its passages'
    links to notes not theirs are not shared: `passages_shown`), carrying `verdict` (the answer page's, from
    `verdict_shape`) when it is given: the API's answer leaves the verdict to its own endpoint."""
    sources = list(answer.sources.all())
    shown = passages_shown([source.passage for source in sources], reader, answer_links_hidden(answer))
    question = answer.question
    retrieval = question.retrieval
    brief = getattr(answer, "verification", None)
    answers = answers_question(answer)
    return AnswerOut(
        question_id=question.pk,
        answer_id=str(answer.public_id),
        question=question.text,
        conversation=str(question.conversation.public_id) if question.conversation else None,
        turn=question.turn,
        searched_for=answer_searched_for(answer),
        searched_how=label(SearchRule, question.search_rule),
        refused=retrieval.refused,
        refusal_reason=retrieval.refusal_reason or None,
        abstained=answer.abstained,
        answers_question=answers,
        answers_question_label=answers_label(answers),
        answer=answer.text,
        error=answer.error or None,
        generator=answer.generator,
        budget_held=answer.budget_held,
        model_failed=answer.model_failed or None,
        model=answer.model or None,
        sources=[
            SourceOut(
                article=hit.article.slug,
                title=hit.article.title,
                score=hit.score,
                url=hit.article.get_absolute_url(),
            )
            for hit in retrieval.articles.all()
        ],
        citations=[_citation(source.number, source.passage, shown[source.passage.pk]) for source in sources],
        topics=[topic.slug for topic in retrieval.topics.all()],
        themes=[theme.slug for theme in retrieval.themes.all()],
        preflight=PreflightOut(
            domain=question.preflight_domain,
            risk=question.preflight_risk,
            suggestion=question.preflight_suggestion,
        ),
        usage=UsageOut(
            input_tokens=answer.input_tokens,
            output_tokens=answer.output_tokens,
            cost_usd=str(answer.cost_usd),
            latency_ms=answer.latency_ms,
        ),
        verification=VerificationOut(
            status=brief.status if brief else None,
            verdict=Verdict(brief.verdict) if brief and brief.verdict else None,
            risk_label=RiskLabel(brief.risk_label) if brief and brief.risk_label else None,
            blocked=brief.blocked if brief else False,
        ),
        topics_matched=[
            TopicOut(title=t.reader_title, url=t.get_absolute_url()) for t in retrieval.topics.all()
        ],
        themes_hit=[theme.title for theme in retrieval.themes.all()],
        verdict=verdict,
    )


# A turn of a conversation on its page; `answer` None: withheld with a note it drew on (its text is not shown).
@dataclass(frozen=True, kw_only=True)
class TurnOut:
    turn: int
    answer: AnswerOut | None  # None: not shown to this reader, for the reason `hidden` gives
    hidden: str = ""


# How much a turn's label weighs in its conversation's: the worst turn's is shown at the top. A turn no judge could
# check weighs more than a mixed one: nothing says how far to trust it.
_LABEL_WEIGHT = {
    RiskLabel.GROUNDED: 0,
    RiskLabel.MIXED: 1,
    RiskLabel.UNAVAILABLE: 2,
    RiskLabel.HALLUCINATING: 3,
}


# A conversation on its page: its turns in order, and the worst label of those checked so far.
@dataclass(frozen=True, kw_only=True)
class ConversationOut:
    conversation_id: str
    url: str
    turns: list[TurnOut]
    risk_label: RiskLabel | None
    checking: int  # turns whose check has not finished yet


def worst_label(labels: list[RiskLabel]) -> RiskLabel | None:
    """The label that trusts least among `labels` (⚠ over ? over ~ over ✓); None for none."""
    return max(labels, key=_LABEL_WEIGHT.__getitem__, default=None)


def conversation_shape(
    conversation: Conversation, turns: list[TurnOut], checks: list[tuple[str, str]]
) -> ConversationOut:
    """The conversation with `turns`, labelled by the worst of `checks` (each turn's verification status and
    risk label, as `verifier.selectors.conversation_labels` gives them)."""
    labels = [RiskLabel(label) for status, label in checks if status in FINISHED and label]
    return ConversationOut(
        conversation_id=str(conversation.public_id),
        url=conversation.get_absolute_url(),
        turns=turns,
        risk_label=worst_label(labels),
        checking=sum(status not in FINISHED for status, _ in checks),
    )


def citations_shape(sources: Sequence[tuple[int, Passage, float]]) -> list[CitationOut]:
    """The citations of an answer still being written, from its (number, passage, score) sources: enough to
    link its `[n]` (the passages' text is left out)."""
    return [_citation(number, passage, "") for number, passage, _ in sources]


def _citation(number: int, passage: Passage, text: str) -> CitationOut:
    return CitationOut(
        number=number,
        article=passage.article.slug,
        title=passage.article.title,
        page=passage.page,
        cited_as=passage.cited_as,
        passage=text,
        url=passage.get_absolute_url(),
    )
