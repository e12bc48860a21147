"""The judge panel: cheap jurors first, a tie-breaker where they disagree or are unsure, within a budget.

The local judge always votes. With Claude available (a key, budget left) a small Claude model votes too; a
claim on which the two disagree, or where either is unsure, goes to the larger tie-breaker model. Every vote
passes the quote gate first. A failed Claude call is recorded and the panel falls back to the local judge,
saying so; it never crashes and never passes silently. Each Claude judgement books the most it can cost with
the budget before it is made, and settles at what it did cost, so the budget is a limit the panel never passes.

A model the team serves over the OpenAI API may sit as the juror in the small Claude model's place (`served`):
it is asked as Claude is, its votes pass the same quote gate, the verdict's disclosure names it, and the Claude
tie-breaker settles what it and the local judge dispute, when there is a Claude key; without one, the more
cautious vote stands.

Given the question the claims answer, the panel also decides whether they answer it: the model juror says so
when it judged them, else the local judge reads whether one of them says what the question takes as given
(`claimcheck.answerability`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from claimcheck.answerability import answering
from claimcheck.claims import Sentence
from claimcheck.judges.claude import ClaimToJudge, ClaudeJudgement, judge_claims_with_claude, most_cost
from claimcheck.judges.local import judge_claims
from claimcheck.judges.types import Ruling, Source
from claimcheck.model_client import ModelCallError, ModelClient
from claimcheck.quote_gate import gate_vote
from claimcheck.terms import DELTA, LOCAL_JUDGE, ClaimStatus, JudgeMode, JurorRole
from modelcalls import Booking, Budget, Usage, book

NO_KEY = "Only the weaker local judge ran: no Claude judge is configured (no API key)."
BUDGET_SPENT = (
    "Only the weaker local judge ran: what is left of today's judge budget cannot cover a Claude call."
)
JUDGE_FAILED = "Only the weaker local judge ran: the Claude judge failed ({reason})."
TIEBREAKER_FAILED = "The tie-breaker failed ({reason}); disputed claims keep the more cautious juror vote."
SERVED_JUROR = "Judged by the local judge and {model}, a model served over the OpenAI API."
SERVED_JUROR_FAILED = "Only the weaker local judge ran: the served juror {model} failed ({reason})."
NO_TIEBREAKER = (
    "Judged by the local judge and {model}, a model served over the OpenAI API; no Claude tie-breaker is "
    "configured, so claims they disagree on keep the more cautious vote."
)
TIEBREAKER_BUDGET_SPENT = (
    "The tie-breaker did not run: what is left of today's judge budget cannot cover it; "
    "disputed claims keep the more cautious juror vote."
)


@dataclass(frozen=True)
class CastVote:
    judge: str  # LOCAL_JUDGE, or the Claude model that voted
    role: JurorRole
    vote: Ruling


@dataclass
class PanelOutcome:
    """One final vote per checkable claim, every vote cast, and what the panel spent."""

    finals: list[Ruling] = field(default_factory=list)
    votes: list[list[CastVote]] = field(default_factory=list)
    escalated: list[bool] = field(default_factory=list)
    local_only: bool = True
    disclosure: str = ""
    budget_held: bool = False  # the daily budget kept Claude, or its tie-breaker, from judging
    errors: list[str] = field(default_factory=list)
    answers_question: bool | None = None  # whether the claims answer the question; None: none was given
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal = Decimal(0)

    @property
    def judges(self) -> set[str]:
        return {cast.judge for votes in self.votes for cast in votes}

    def spend(self, usage: Usage) -> None:
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cost_usd += usage.cost_usd


@dataclass(frozen=True)
class PanelConfig:
    mode: JudgeMode
    claude: ModelClient | None  # None: no API key
    juror_model: str  # the served juror's model when `served` is given
    tiebreaker_model: str
    escalate_below: float = 0.6
    budget: Budget | None = None  # None: no limit
    served: ModelClient | None = None  # a model served over the OpenAI API, the juror in Claude's place

    @property
    def juror(self) -> ModelClient | None:
        """The client the juror is asked through: the served model's, else Claude's (None: no model juror)."""
        return self.served if self.served is not None else self.claude


class _BudgetSpent(Exception):
    """Today's budget cannot cover the call: it was not made."""


def _gated(votes: Sequence[Ruling], claims: Sequence[Sentence], sources: dict[int, Source]) -> list[Ruling]:
    return [gate_vote(vote, sources, claim=claim.text) for vote, claim in zip(votes, claims, strict=True)]


def _claude(
    config: PanelConfig,
    client: ModelClient,
    outcome: PanelOutcome,
    model: str,
    claims: Sequence[Sentence],
    numbers: Sequence[int],
    sources: Sequence[Source],
    question: str | None = None,
) -> ClaudeJudgement:
    """One judgement by `model` through `client` of the claims at `numbers` (and whether they answer `question`,
    given it), booked with the budget and added to what `outcome` spent.

    Raises `_BudgetSpent` (no call made) or `ModelCallError` (a call failed; billed replies still count).
    """
    to_judge = [
        ClaimToJudge(number=n + 1, text=claims[n].text, citations=claims[n].citations) for n in numbers
    ]
    most = most_cost(client, model=model, claims=to_judge, sources=sources, question=question)
    booking = book(config.budget, model, most)
    if booking is None:
        raise _BudgetSpent
    # Anything but a ModelCallError leaves the booking standing: the call may have been billed.
    try:
        judgement = judge_claims_with_claude(
            client, model=model, claims=to_judge, sources=sources, question=question
        )
    except ModelCallError as error:
        _spent(outcome, booking, error.usage)
        raise
    _spent(outcome, booking, judgement.usage)
    return judgement


def _spent(outcome: PanelOutcome, booking: Booking, usage: Usage) -> None:
    outcome.spend(usage)
    booking.settle(usage)


def run_panel(
    claims: Sequence[Sentence], sources: Sequence[Source], config: PanelConfig, *, question: str | None = None
) -> PanelOutcome:
    """Judge the checkable claims; `claims` may include meta-statements, which are skipped. Given the `question`
    the claims are an answer to, decide too whether they answer it: the Claude juror's word when it judged
    them (the tie-breaker sees only the disputed claims, so it is not asked), else the local judge's."""
    outcome = _judged(claims, sources, config, question)
    if question is not None and outcome.answers_question is None:
        outcome.answers_question = answered_locally(question, [c for c in claims if c.is_claim], sources)
    return outcome


def answered_locally(question: str, claims: Sequence[Sentence], sources: Sequence[Source]) -> bool:
    """Whether one of `claims` says what `question` takes as given, as the local judge reads it, each claim
    read as about the source it cites first (its title and headings); an answer with no claims does not
    answer."""
    by_number = {s.index: s for s in sources}
    about = [next((by_number[n].context for n in c.citations if n in by_number), "") for c in claims]
    return answering(question, [(c.text, title) for c, title in zip(claims, about, strict=True)]) is not None


def _judged(
    claims: Sequence[Sentence], sources: Sequence[Source], config: PanelConfig, question: str | None
) -> PanelOutcome:
    checkable = [c for c in claims if c.is_claim]
    by_number = {s.index: s for s in sources}
    outcome = PanelOutcome(votes=[[] for _ in checkable], escalated=[False] * len(checkable))
    juror = config.juror
    if not checkable:
        outcome.local_only = config.mode == JudgeMode.LOCAL or juror is None
        return outcome

    def local_votes() -> list[Ruling]:
        votes = _gated(judge_claims(checkable, sources), checkable, by_number)
        for cast, vote in zip(outcome.votes, votes, strict=True):
            cast.append(CastVote(LOCAL_JUDGE, JurorRole.JUROR, vote))
        return votes

    local = local_votes() if config.mode != JudgeMode.CLAUDE or juror is None else []
    outcome.finals = list(local)
    if config.mode == JudgeMode.LOCAL:
        return outcome
    if juror is None:
        outcome.disclosure = NO_KEY
        return outcome
    numbers = list(range(len(checkable)))
    judgement: ClaudeJudgement | None = None
    served = config.served is not None
    try:
        judgement = _claude(config, juror, outcome, config.juror_model, checkable, numbers, sources, question)
    except _BudgetSpent:
        outcome.disclosure, outcome.budget_held = BUDGET_SPENT, True
    except ModelCallError as error:
        outcome.errors.append(f"{config.juror_model}: {error.kind}: {error.detail}")
        failed = SERVED_JUROR_FAILED if served else JUDGE_FAILED
        outcome.disclosure = failed.format(model=config.juror_model, reason=error.message)
    if judgement is None:
        if not local:  # Claude-only mode: fall back to the local judge rather than leave claims unjudged
            outcome.finals = local_votes()
        return outcome
    outcome.local_only = False
    outcome.disclosure = SERVED_JUROR.format(model=config.juror_model) if served else ""
    outcome.answers_question = judgement.answers_question
    jurors = _gated(judgement.votes, checkable, by_number)
    for votes, vote in zip(outcome.votes, jurors, strict=True):
        votes.append(CastVote(config.juror_model, JurorRole.JUROR, vote))

    # A claim goes to the tie-breaker when the jurors disagree or one of them is unsure. In Claude-only mode
    # the model juror is the only one.
    disputed = [
        i
        for i, theirs in enumerate(jurors)
        if theirs.confidence < config.escalate_below
        or (local and (local[i].status != theirs.status or local[i].confidence < config.escalate_below))
    ]
    # Undisputed claims keep the model juror's vote (with its quote checked by the gate).
    outcome.finals = list(jurors)
    if not disputed:
        return outcome
    for i in disputed:
        outcome.escalated[i] = True
        if local:  # until the tie-breaker speaks, the more cautious juror vote stands
            outcome.finals[i] = max(local[i], jurors[i], key=lambda v: DELTA[ClaimStatus(v.status)])
    if config.claude is None:  # a served juror, and no Claude key for the tie-breaker
        outcome.disclosure = NO_TIEBREAKER.format(model=config.juror_model)
        return outcome
    try:
        tie = _claude(config, config.claude, outcome, config.tiebreaker_model, checkable, disputed, sources)
    except _BudgetSpent:
        outcome.disclosure, outcome.budget_held = TIEBREAKER_BUDGET_SPENT, True
        return outcome
    except ModelCallError as error:
        outcome.errors.append(f"{config.tiebreaker_model}: {error.kind}: {error.detail}")
        outcome.disclosure = TIEBREAKER_FAILED.format(reason=error.message)
        return outcome
    for i, vote in zip(disputed, _gated(tie.votes, [checkable[i] for i in disputed], by_number), strict=True):
        outcome.votes[i].append(CastVote(config.tiebreaker_model, JurorRole.TIEBREAKER, vote))
        outcome.finals[i] = vote
    return outcome
