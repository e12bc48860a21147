"""The operators' log of answers: verdicts, critic findings, judges, tokens, cost, latency, alerts, spending."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet

from claimcheck.terms import Verdict
from garden.models import Answer
from verifier.budget import (
    anonymous_limit,
    daily_limit,
    spent_today_by_purpose,
    spent_today_by_reader,
    spent_today_by_token,
    today_start,
)
from verifier.models import CriticFinding, Verification, VerificationStatus

# The verdict filter's value for the answers that do not answer their question: abstentions, and those whose
# judge found so (a grounded answer among them is not listed as grounded).
DOES_NOT_ANSWER = "does_not_answer"


@dataclass(frozen=True)
class LogFilters:
    verdict: str = ""
    severity: str = ""
    since: datetime.date | None = None
    until: datetime.date | None = None


def answers_logged(filters: LogFilters = LogFilters()) -> QuerySet[Answer]:
    """Every answer, newest first, with its verification and failed critics loaded."""
    answers = Answer.objects.select_related(
        "question__retrieval", "question__conversation", "verification"
    ).prefetch_related(
        Prefetch(
            "verification__findings", CriticFinding.objects.filter(passed=False), to_attr="failed_checks"
        )
    )
    not_answering = Q(verification__status=VerificationStatus.DONE, verification__answers_question=False)
    if filters.verdict == "refused":
        answers = answers.filter(question__retrieval__refused=True)
    elif filters.verdict == DOES_NOT_ANSWER:
        answers = answers.filter(Q(abstained=True) | not_answering)
    elif filters.verdict == Verdict.GROUNDED:
        answers = answers.filter(verification__verdict=filters.verdict).exclude(not_answering)
    elif filters.verdict:
        answers = answers.filter(verification__verdict=filters.verdict)
    if filters.severity:
        answers = answers.filter(
            Exists(
                CriticFinding.objects.filter(
                    verification__answer=OuterRef("pk"), passed=False, severity=filters.severity
                )
            )
        )
    if filters.since:
        answers = answers.filter(created_at__date__gte=filters.since)
    if filters.until:
        answers = answers.filter(created_at__date__lte=filters.until)
    return answers.order_by("-created_at")


def alerts(limit: int = 20) -> QuerySet[Verification]:
    """Recent verifications over the delta-score threshold, or blocked by a critic check."""
    return (
        Verification.objects.filter(Q(delta_score__gt=settings.VERIFIER_ALERT_DELTA) | Q(blocked=True))
        .select_related("answer__question")
        .order_by("-created_at")[:limit]
    )


@dataclass(frozen=True)
class SpendToday:
    """Claude's spending today, for writing answers, verifying them, fact-checks and batches, against the daily
    limit."""

    by_purpose: dict[str, Decimal]  # e.g. {"Fact-checking text": Decimal("0.04")}
    limit: Decimal
    held_local: int  # signed-in readers' answers the budget kept from Claude (or its tie-breaker) today
    written_locally: int = 0  # their answers the local synthesiser wrote today because the budget was spent
    # {"Signed-in readers and operators": ..., "Visitors not signed in": ...} (verifier.budget's labels)
    by_reader: dict[str, Decimal] = field(default_factory=dict)
    anonymous_limit: Decimal = Decimal(0)  # the visitors' allowance, within `limit`
    anonymous_held: int = 0  # visitors' answers their spent allowance kept from Claude (writing or judging)
    # Of the signed-in readers' spending, what came through each personal API token (verifier.budget's labels).
    by_token: dict[str, Decimal] = field(default_factory=dict)

    @property
    def spent(self) -> Decimal:
        return sum(self.by_purpose.values(), Decimal(0))

    @property
    def budget_spent(self) -> bool:
        return self.spent >= self.limit or self.held_local > 0 or self.written_locally > 0


def spending_summary() -> SpendToday:
    today = Q(created_at__gte=today_start())
    held_local = Verification.objects.filter(
        today, budget_held=True, answer__question__anonymous=False
    ).count()
    written_locally = Answer.objects.filter(today, budget_held=True, question__anonymous=False).count()
    anonymous_held = (
        Answer.objects.filter(today, question__anonymous=True)
        .filter(Q(budget_held=True) | Q(verification__budget_held=True))
        .count()
    )
    return SpendToday(
        spent_today_by_purpose(),
        daily_limit(),
        held_local,
        written_locally,
        by_reader=spent_today_by_reader(),
        anonymous_limit=anonymous_limit(),
        anonymous_held=anonymous_held,
        by_token=spent_today_by_token(),
    )
