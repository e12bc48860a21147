"""The daily Claude budget: one ledger of what every Claude call costs, booked before each so it holds as a limit.

Each judgement (a juror's or the tie-breaker's calls over a text's claims) and each answer Claude writes books
the most it can cost under a PostgreSQL advisory lock, so processes spending at the same time take turns at the
ledger and together never pass the day's limit; afterwards the booking is settled at what Anthropic billed. A
booking whose process died before settling stays at its most: the call may have been billed, and a limit errs
on the safe side. The garden books its answers here through `settings.ANSWER_BUDGET` (`answer_budget`).

Questions from visitors, who have no role (not signed in, or signed in to an account given none:
`dashboard.actions.asking.spends_as_visitor`), spend from the same ledger, marked `anonymous`, within an allowance of their
own (`ANONYMOUS_CLAUDE_DAILY_USD`): however many they ask, the rest of the day's limit is left for readers. With no allowance no Claude call is made for them at all (`anonymous_local`).

Each row also names the signed-in reader it was spent for, and the personal API token the call came through:
whoever makes the call says so around it (`spending_for`), as the ask page and the API do for their callers
and a verification for the reader who asked, so that the code in between (the garden's synthesis, the engine's panel) need not
carry it.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone

from modelcalls import Usage
from verifier.models import ApiToken, Spend, SpendPurpose

# Advisory-lock key of the ledger (verifications lock in namespace 7401 by their id).
LEDGER_LOCK = (7402, 0)


def today_start() -> datetime.datetime:
    """Midnight, local time: where the budget's day begins."""
    return timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)


# How the logs page names who the ledger's rows were spent for (`Spend.anonymous`).
READER_SIGNED_IN = "Signed-in readers and operators"
READER_ANONYMOUS = "Visitors not signed in"


def spent_today(*, anonymous: bool | None = None) -> Decimal:
    """What Claude has cost today (USD), for every purpose, calls in flight at their most: for everyone, or only
    for visitors who were (`anonymous=True`) or were not signed in."""
    rows = Spend.objects.filter(created_at__gte=today_start())
    if anonymous is not None:
        rows = rows.filter(anonymous=anonymous)
    return rows.aggregate(total=Sum("cost_usd"))["total"] or Decimal(0)


def spent_today_by_reader() -> dict[str, Decimal]:
    """Today's spending for signed-in readers (and operators' runs) and for anonymous visitors, both always."""
    return {READER_SIGNED_IN: spent_today(anonymous=False), READER_ANONYMOUS: spent_today(anonymous=True)}


def spent_today_by_token() -> dict[str, Decimal]:
    """Today's spending through each personal API token that spent, e.g. {"alice's token “laptop” (gw_x1Y2z…)":
    Decimal("0.01")}, the largest first."""
    rows = (
        Spend.objects.filter(created_at__gte=today_start(), token__isnull=False)
        .values("token")
        .annotate(total=Sum("cost_usd"))
        .order_by("-total", "token")
    )
    totals = {row["token"]: row["total"] for row in rows}
    tokens = ApiToken.objects.select_related("user").in_bulk(list(totals))
    return {
        TOKEN_SPENT.format(user=t.user.get_username(), name=t.name, prefix=t.prefix): totals[pk]
        for pk, t in tokens.items()
    }


TOKEN_SPENT = "{user}'s token “{name}” ({prefix}…)"


def spent_today_by_purpose() -> dict[str, Decimal]:
    """Today's spending per purpose (its label, e.g. "Fact-checking text"), for the purposes that spent."""
    rows = (
        Spend.objects.filter(created_at__gte=today_start())
        .values("purpose")
        .annotate(total=Sum("cost_usd"))
        .order_by("purpose")
    )
    return {SpendPurpose(row["purpose"]).label: row["total"] for row in rows}


def daily_limit() -> Decimal:
    return Decimal(str(settings.VERIFIER_DAILY_BUDGET_USD))


def anonymous_limit() -> Decimal:
    """What anonymous visitors' questions may cost a day, within the daily limit."""
    return min(Decimal(str(settings.ANONYMOUS_CLAUDE_DAILY_USD)), daily_limit())


def anonymous_local() -> bool:
    """Whether anonymous visitors' answers are written and judged locally, without asking Claude at all."""
    return anonymous_limit() <= 0


@dataclass(frozen=True)
class Spender:
    """Who a Claude call is made for: a signed-in reader, and the API token their call came through."""

    user_id: int | None = None
    token_id: int | None = None


_spender: ContextVar[Spender | None] = ContextVar("spender", default=None)


@contextmanager
def spending_for(spender: Spender) -> Iterator[None]:
    """Book every Claude call made in the block (in this thread) as spent for `spender`."""
    reset = _spender.set(spender)
    try:
        yield
    finally:
        _spender.reset(reset)


@dataclass(frozen=True)
class DailyBudget:
    """Today's ledger as a `modelcalls.Budget` (the garden's and the engine's calls alike), each call booked for
    `purpose`; for an `anonymous` visitor, also within their allowance."""

    purpose: SpendPurpose
    anonymous: bool = False

    def book(self, model: str, most: Decimal) -> Spend | None:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", LEDGER_LOCK)
            if spent_today() + most > daily_limit():
                return None
            if self.anonymous and spent_today(anonymous=True) + most > anonymous_limit():
                return None
            spender = _spender.get() or Spender()
            return Spend.objects.create(
                purpose=self.purpose,
                anonymous=self.anonymous,
                user_id=spender.user_id,
                token_id=spender.token_id,
                model=model,
                cost_usd=most,
                settled=False,
            )

    def settle(self, booking: object, usage: Usage) -> None:
        assert isinstance(booking, Spend)
        if not usage.cost_usd and not usage.input_tokens and not usage.output_tokens:
            booking.delete()  # no reply came: nothing was billed
            return
        booking.input_tokens = usage.input_tokens
        booking.output_tokens = usage.output_tokens
        booking.cost_usd = usage.cost_usd
        booking.settled = True
        booking.save(update_fields=["input_tokens", "output_tokens", "cost_usd", "settled"])


def answer_budget(*, anonymous: bool = False) -> DailyBudget:
    """The budget answers written by Claude are booked against (`settings.ANSWER_BUDGET` names this), for an
    `anonymous` visitor's question or a signed-in reader's."""
    return DailyBudget(SpendPurpose.ANSWER, anonymous=anonymous)


def condense_budget(*, anonymous: bool = False) -> DailyBudget:
    """The budget the calls that condense a follow-up into a standalone question are booked against
    (`settings.CONDENSE_BUDGET` names this): the same daily ledger, under a purpose of its own."""
    return DailyBudget(SpendPurpose.CONDENSE, anonymous=anonymous)
