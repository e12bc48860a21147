"""The daily Claude budget: one ledger of what every Claude call costs, booked before each so it holds as a limit.

Each judgement (a juror's or the tie-breaker's calls over a text's claims) and each answer Claude writes books
the most it can cost under a PostgreSQL advisory lock, so processes spending at the same time take turns at the
ledger and together never pass the day's limit; afterwards the booking is settled at what Anthropic billed. A
booking whose process died before settling stays at its most: the call may have been billed, and a limit errs
on the safe side. The garden books its answers here through `settings.ANSWER_BUDGET` (`answer_budget`).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone

from verifier.models import JudgeSpend, SpendPurpose

# Advisory-lock key of the ledger (verifications lock in namespace 7401 by their id).
LEDGER_LOCK = (7402, 0)


def today_start() -> datetime.datetime:
    """Midnight, local time: where the budget's day begins."""
    return timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)


def spent_today() -> Decimal:
    """What Claude has cost today (USD), for every purpose, calls in flight at their most."""
    spent = JudgeSpend.objects.filter(created_at__gte=today_start()).aggregate(total=Sum("cost_usd"))
    return spent["total"] or Decimal(0)


def spent_today_by_purpose() -> dict[str, Decimal]:
    """Today's spending per purpose (its label, e.g. "Fact-checking text"), for the purposes that spent."""
    rows = (
        JudgeSpend.objects.filter(created_at__gte=today_start())
        .values("purpose")
        .annotate(total=Sum("cost_usd"))
        .order_by("purpose")
    )
    return {SpendPurpose(row["purpose"]).label: row["total"] for row in rows}


class Billed(Protocol):
    """What a call was billed: the garden's and the engine's `Usage` alike, as both book against this ledger."""

    @property
    def input_tokens(self) -> int: ...

    @property
    def output_tokens(self) -> int: ...

    @property
    def cost_usd(self) -> Decimal: ...


def daily_limit() -> Decimal:
    return Decimal(str(settings.VERIFIER_DAILY_BUDGET_USD))


@dataclass(frozen=True)
class DailyBudget:
    """Today's ledger as a `garden.claude_api.Budget` and a `claimcheck.claude_client.Budget`, each call booked
    for `purpose`."""

    purpose: SpendPurpose

    def book(self, model: str, most: Decimal) -> JudgeSpend | None:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", LEDGER_LOCK)
            if spent_today() + most > daily_limit():
                return None
            return JudgeSpend.objects.create(purpose=self.purpose, model=model, cost_usd=most, settled=False)

    def settle(self, booking: object, usage: Billed) -> None:
        assert isinstance(booking, JudgeSpend)
        if not usage.cost_usd and not usage.input_tokens and not usage.output_tokens:
            booking.delete()  # no reply came: nothing was billed
            return
        booking.input_tokens = usage.input_tokens
        booking.output_tokens = usage.output_tokens
        booking.cost_usd = usage.cost_usd
        booking.settled = True
        booking.save(update_fields=["input_tokens", "output_tokens", "cost_usd", "settled"])


def answer_budget() -> DailyBudget:
    """The budget answers written by Claude are booked against (`settings.ANSWER_BUDGET` names this)."""
    return DailyBudget(SpendPurpose.ANSWER)
