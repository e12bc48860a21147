"""The one shape of an answer and of its verdict: the API returns it (its OpenAPI schema is these classes), the
answer page renders it and `ask --json` prints it.

Plain dataclasses built by `answer_shape` and `verdict_shape` from the models. A field only the pages show (an id
for an anchor, a passage's address, a label) is marked `PAGE_ONLY`: the API neither sends nor documents it.
The class names are the API's schema names; their descriptions are comments, not docstrings, which the schema
would publish.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, PlainSerializer, TypeAdapter

from claimcheck.quote_gate import quote_passed
from claimcheck.terms import ClaimStatus, JurorRole, RiskLabel, Severity, Verdict
from garden.models import Answer, Conversation, Generator, Passage, SearchRule
from garden.readers import Reader
from garden.selectors import answer_links_hidden, answer_searched_for, passages_shown, texts_shown
from verifier.models import FINISHED, CriticFinding, VerificationStatus, Vote
from verifier.models import Claim as ClaimRow
from verifier.selectors import (
    DOES_NOT_ANSWER,
    answers_label,
    answers_question,
    verdict_summary,
    verification_for_answer,
)

PAGE_ONLY = Field(exclude=True)
ANSWERS_QUESTION_RULE = (
    "Whether the answer answers its question: it is not refused, not an abstention and not failed, and its "
    "verification, once finished, did not find that its claims only say what is near the question (a grounded "
    "answer that does not answer is never labelled ✓)."
)
ANSWERS_QUESTION_LABEL = '"Answers the question" or "Does not answer the question", as the page says.'
CITED_AS = 'How the source is cited: its title, with its page for a PDF ("Hive care, p. 2").'


def _rounded(score: float) -> float:
    return round(score, 4)


def _label(vocabulary: Callable[[str], Any], value: str) -> str:
    """A stored value's label in its vocabulary (a model's choices or the engine's words), or the value itself
    when it is none of its words (as `get_FOO_display`)."""
    try:
        return str(vocabulary(value).label)
    except ValueError:
        return value


# An article retrieval found, with its score.
@dataclass(frozen=True)
class SourceOut:
    article: str
    title: str
    # The page shows the score to 3 places from the full value; the API has always sent 4.
    score: Annotated[float, PlainSerializer(_rounded, return_type=float)]
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


# Where the check of an answer stands, as the answer itself carries it; `VerdictOut` is the whole verdict.
@dataclass(frozen=True)
class VerificationOut:
    status: str | None
    verdict: Verdict | None = None
    risk_label: RiskLabel | None = None
    blocked: Annotated[
        bool, Field(description="A critic check held the answer back: show it only on request.")
    ] = False


@dataclass(frozen=True)
class VoteOut:
    judge: str
    role: str
    status: ClaimStatus
    confidence: float
    quote: str
    flags: list[str]

    @property
    def role_label(self) -> str:
        return _label(JurorRole, self.role)

    @property
    def status_label(self) -> str:
        return ClaimStatus(self.status).label


@dataclass(frozen=True)
class PassageOut:
    """The passage a claim was judged against, where the page links to it."""

    url: str
    cited_as: str
    current: bool
    commit: str = ""  # the git commit its revision came from (a git garden's), shortened; "" for a folder's


# A sentence of the answer with its status; `votes` says why.
@dataclass(frozen=True, kw_only=True)
class ClaimOut:
    text: str
    start: int
    end: int
    status: Annotated[
        ClaimStatus | Literal[""], Field(description="Empty for a sentence that is not a claim.")
    ]
    quote: str
    source_index: int | None
    article: str | None
    confidence: float | None
    flags: list[str]
    escalated: bool
    votes: list[VoteOut]
    id: Annotated[
        int,
        Field(
            description="The claim's id, to report it wrong: POST /api/answers/{answer_id}/claims/{id}/report."
        ),
    ]
    is_claim: Annotated[bool, PAGE_ONLY]
    passage: Annotated[PassageOut | None, PAGE_ONLY]

    @property
    def status_label(self) -> str:
        return ClaimStatus(self.status).label if self.status else ""


@dataclass(frozen=True)
class CriticOut:
    check: str
    severity: str
    passed: bool
    message: str
    error: str | None
    latency_ms: float

    @property
    def severity_label(self) -> str:
        return _label(Severity, self.severity)


# The verdict on an answer: claims with statuses, quotes, flags and juror votes; `status` is pending or
# running until the judge is done, and null when the answer has nothing to check.
@dataclass(frozen=True, kw_only=True)
class VerdictOut:
    status: str | None
    error: str | None = None
    verdict: Annotated[
        Verdict | None,
        Field(
            description="The claims' verdict: grounded, mixed or hallucinating by their statuses (or no_claims). "
            "Whether the answer answers its question is `answers_question`: one that does not is never ✓."
        ),
    ] = None
    risk_score: int | None = None
    risk_label: Annotated[
        RiskLabel | None,
        Field(
            description="✓ grounded, ~ mixed or unsure (or does not answer the question), ⚠ likely "
            "hallucination, ? judge unavailable."
        ),
    ] = None
    delta_score: float | None = None
    confidence: int | None = None
    compact: Annotated[
        str | None,
        Field(
            description="The compact line, e.g. `[Hall: ✓ · 12/100 · local judge · 0 flags]`, or "
            "`[Hall: ~ · does not answer · 50/100 · ...]` for an answer that does not answer its question."
        ),
    ] = None
    answers_question: Annotated[bool, Field(description=ANSWERS_QUESTION_RULE)]
    answers_question_label: Annotated[str, Field(description=ANSWERS_QUESTION_LABEL)]
    judges: int = 0
    flags: int = 0
    local_only: bool = False
    disclosure: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: str = "0"
    counts: Annotated[dict[str, int], Field(default={})]
    sources_used: Annotated[list[int], Field(default=[])]
    blocked: bool = False
    critics: Annotated[list[CriticOut], Field(default=[])]
    claims: list[ClaimOut]
    latency_ms: Annotated[int, PAGE_ONLY] = 0
    sentences: Annotated[list[ClaimOut], PAGE_ONLY]  # every sentence, claim or not, for highlighting

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def status_label(self) -> str:
        return _label(VerificationStatus, self.status or "")

    @property
    def verdict_label(self) -> str:
        return Verdict(self.verdict).label if self.verdict else ""

    @property
    def label_words(self) -> str:
        """The words beside the risk label: what it means, or, when the answer does not answer its question and
        is no likely hallucination, that (never "grounded")."""
        if not self.answers_question and self.risk_label != RiskLabel.HALLUCINATING:
            return DOES_NOT_ANSWER
        return self.risk_label.text if self.risk_label else ""

    @property
    def answers_note(self) -> str:
        """DOES_NOT_ANSWER when the answer does not answer its question and the label's words say something
        else (a likely hallucination); else ""."""
        return DOES_NOT_ANSWER if not self.answers_question and self.label_words != DOES_NOT_ANSWER else ""

    @property
    def verdict_shown(self) -> str:
        """The claims' verdict as the page names it beside the label: not shown for claims that are grounded in
        an answer that does not answer its question (its label says what matters)."""
        if not self.answers_question and self.verdict == Verdict.GROUNDED:
            return ""
        return self.verdict_label

    @property
    def status_counts(self) -> list[tuple[str, str, int]]:
        """(status, label, count) for every status, in severity order."""
        return [(status, ClaimStatus(status).label, count) for status, count in self.counts.items()]

    @property
    def failed_critics(self) -> list[CriticOut]:
        return [critic for critic in self.critics if not critic.passed]


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
        return _label(Generator, self.generator)

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
        searched_how=_label(SearchRule, question.search_rule),
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


def verdict_shape(
    answer: Answer,
    *,
    reader: Reader,
    hidden: Mapping[int, set[str]] | None = None,
    rejected_quotes: bool = False,
) -> VerdictOut:
    """The verdict on `answer` as `reader` is shown it, its verification loaded with its claims and votes
    (`verification_for_answer`, whose load stays on the answer for `answer_shape`). An answer with nothing to
    check gives a verdict with no status and no claims; either way it says whether the answer answers its
    question (`verifier.selectors.answers_question`).

    A quote the quote gate turned down (invented, or saying too little of its claim: `quote_passed`) is sent
    only with `rejected_quotes`, for editors and operators (`may_see_rejected_quotes`); readers get "" in its
    place, and the vote's flags say why. A quote's link to a note not the reader's names nothing
    (`garden.selectors.texts_shown`; `hidden`, when the page loaded the answer: `answer_links_hidden`)."""
    verification = verification_for_answer(answer)
    answers = answers_question(answer)
    if verification is None:
        return VerdictOut(
            status=None,
            answers_question=answers,
            answers_question_label=answers_label(answers),
            counts={},
            sources_used=[],
            critics=[],
            claims=[],
            sentences=[],
        )
    summary = verdict_summary(verification)
    quoted = [
        (claim.passage.article_id if claim.passage else None, quote)
        for claim in summary.claims
        for quote in [claim.quote, *(vote.quote for vote in claim.votes.all())]
    ]
    shown = iter(texts_shown(quoted, reader, hidden))
    sentences = [
        _claim(claim, next(shown), [next(shown) for _ in claim.votes.all()], rejected_quotes=rejected_quotes)
        for claim in summary.claims
    ]
    return VerdictOut(
        status=verification.status,
        error=verification.error or None,
        verdict=Verdict(verification.verdict) if verification.verdict else None,
        risk_score=verification.risk_score,
        risk_label=RiskLabel(verification.risk_label) if verification.risk_label else None,
        delta_score=verification.delta_score,
        confidence=verification.confidence,
        compact=verification.compact or None,
        answers_question=answers,
        answers_question_label=answers_label(answers),
        judges=verification.judges,
        flags=verification.flags,
        local_only=verification.local_only,
        disclosure=verification.disclosure or None,
        input_tokens=verification.input_tokens,
        output_tokens=verification.output_tokens,
        cost_usd=str(verification.cost_usd),
        counts=summary.counts,
        sources_used=summary.sources_used,
        blocked=verification.blocked,
        critics=[_critic(finding) for finding in verification.findings.all()],
        claims=[claim for claim in sentences if claim.is_claim],
        latency_ms=verification.latency_ms,
        sentences=sentences,
    )


def _shown_quote(quote: str, flags: list[str], *, rejected_quotes: bool) -> str:
    return quote if rejected_quotes or quote_passed(flags) else ""


def _claim(claim: ClaimRow, quote: str, vote_quotes: list[str], *, rejected_quotes: bool) -> ClaimOut:
    passage = claim.passage
    return ClaimOut(
        text=claim.text,
        start=claim.start,
        end=claim.end,
        status=ClaimStatus(claim.status) if claim.status else "",
        quote=_shown_quote(quote, claim.flags, rejected_quotes=rejected_quotes),
        source_index=claim.source_number,
        article=passage.article.slug if passage else None,
        confidence=claim.confidence,
        flags=list(claim.flags),
        escalated=claim.escalated,
        votes=[
            _vote(vote, shown, rejected_quotes=rejected_quotes)
            for vote, shown in zip(claim.votes.all(), vote_quotes, strict=True)
        ],
        id=claim.pk,
        is_claim=claim.is_claim,
        passage=PassageOut(
            url=passage.get_absolute_url(),
            cited_as=passage.cited_as,
            current=passage.is_current,
            commit=passage.revision.commit[:12],
        )
        if passage
        else None,
    )


def _vote(vote: Vote, quote: str, *, rejected_quotes: bool) -> VoteOut:
    return VoteOut(
        judge=vote.judge,
        role=vote.role,
        status=ClaimStatus(vote.status),
        confidence=vote.confidence,
        quote=_shown_quote(quote, vote.flags, rejected_quotes=rejected_quotes),
        flags=list(vote.flags),
    )


def _critic(finding: CriticFinding) -> CriticOut:
    return CriticOut(
        check=finding.critic_name,
        severity=finding.severity,
        passed=finding.passed,
        message=finding.message,
        error=finding.error or None,
        latency_ms=finding.latency_ms,
    )


def shape_json(shape: AnswerOut | VerdictOut) -> dict[str, Any]:
    """The shape as the API sends it: page-only fields left out, values as JSON has them."""
    data: dict[str, Any] = _JSON[type(shape)].dump_python(shape, mode="json")
    return data


_JSON: dict[type, TypeAdapter[Any]] = {AnswerOut: TypeAdapter(AnswerOut), VerdictOut: TypeAdapter(VerdictOut)}
