"""The verdict on an answer: its claims with statuses, quotes, flags and juror votes, and its critics' findings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from claimcheck.quote_gate import quote_passed
from claimcheck.terms import ClaimStatus, JurorRole, RiskLabel, Severity, Verdict
from dashboard.shapes.fields import (
    ANSWERS_QUESTION_LABEL,
    ANSWERS_QUESTION_RULE,
    PAGE_ONLY,
    label,
)
from garden.models import Answer
from garden.readers import Reader
from garden.selectors import texts_shown
from verifier.models import FINISHED, CriticFinding, VerificationStatus, Vote
from verifier.models import Claim as ClaimRow
from verifier.selectors import (
    DOES_NOT_ANSWER,
    answers_label,
    answers_question,
    verdict_summary,
    verification_for_answer,
)


# Where the check of an answer stands, as the answer itself carries it; `VerdictOut` is the whole verdict.
@dataclass(frozen=True)
class VerificationOut:
    status: str | None
    verdict: Verdict | None = None
    risk_label: RiskLabel | None = None
    blocked: Annotated[bool, Field(description="A critic held the answer back: show it only on request.")] = (
        False
    )


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
        return label(JurorRole, self.role)

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
        return label(Severity, self.severity)


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
        return label(VerificationStatus, self.status or "")

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
