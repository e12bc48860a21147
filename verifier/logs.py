"""The operators' log of answers: verdicts, critic findings, judges, tokens, cost, latency, alerts, spending."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet

from garden.models import Answer
from verifier.budget import daily_limit, spent_today_by_purpose, today_start
from verifier.models import CriticFinding, Verification


@dataclass(frozen=True)
class LogFilters:
    verdict: str = ""
    severity: str = ""
    since: datetime.date | None = None
    until: datetime.date | None = None


def answers_logged(filters: LogFilters = LogFilters()) -> QuerySet[Answer]:
    """Every answer, newest first, with its verification and failed critic checks loaded."""
    answers = Answer.objects.select_related("question__retrieval", "verification").prefetch_related(
        Prefetch(
            "verification__findings", CriticFinding.objects.filter(passed=False), to_attr="failed_checks"
        )
    )
    if filters.verdict == "refused":
        answers = answers.filter(question__retrieval__refused=True)
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
    held_local: int  # answers the budget kept from Claude (or from its tie-breaker) today
    written_locally: int = 0  # answers the local synthesiser wrote today because the budget was spent

    @property
    def spent(self) -> Decimal:
        return sum(self.by_purpose.values(), Decimal(0))

    @property
    def budget_spent(self) -> bool:
        return self.spent >= self.limit or self.held_local > 0 or self.written_locally > 0


def spend_today() -> SpendToday:
    held_local = Verification.objects.filter(created_at__gte=today_start(), budget_held=True).count()
    written_locally = Answer.objects.filter(created_at__gte=today_start(), budget_held=True).count()
    return SpendToday(spent_today_by_purpose(), daily_limit(), held_local, written_locally)
