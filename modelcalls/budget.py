"""Book, then settle: the most a model call can cost is set aside before it is made, and replaced by what it was
billed once it was.

Every caller (the answers, the condensed follow-ups, the engine's judges) books through `book` and settles the
`Booking` it gives, so the order and the "no budget, no limit" rule are written once. The ledger itself is
`verifier.budget.DailyBudget`, handed to the garden by a setting and to the engine by `PanelConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from modelcalls.replies import Usage


class Budget(Protocol):
    """A spending limit that model calls are booked against."""

    def book(self, model: str, most: Decimal) -> object | None:
        """Set aside `most` (USD) for one call by `model`; None when what is left today cannot cover it."""
        ...

    def settle(self, booking: object, usage: Usage) -> None:
        """Replace a booking by what the call was billed (nothing, when no reply came)."""
        ...


@dataclass(frozen=True)
class Booking:
    """One call's place in `budget` (with no budget, a place that holds nothing and settles nothing).

    A booking never settled stays at its most: a call that ended in anything but a model's error may still have
    been billed, and a limit errs on the safe side.
    """

    budget: Budget | None
    held: object = None

    def settle(self, usage: Usage) -> None:
        """Replace the booking by what the call was billed."""
        if self.budget is not None:
            self.budget.settle(self.held, usage)


def book(budget: Budget | None, model: str, most: Decimal) -> Booking | None:
    """A booking of `most` (USD) for one call by `model`; None when `budget` cannot cover it, and one that holds
    nothing when there is no budget (no limit)."""
    if budget is None:
        return Booking(None)
    held = budget.book(model, most)
    return Booking(budget, held) if held is not None else None
