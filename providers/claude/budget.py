"""`Budget`: where a Claude call is booked before it is made and settled once it was billed.

Both apps spend from one daily budget: the ledger lives in `verifier.budget`, and `config` hands it to the
garden (`settings.ANSWER_BUDGET`), which only knows this protocol, since the garden never imports the verifier.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Protocol

from providers.claude.pricing import Usage


class Budget(Protocol):
    """A spending limit that Claude calls are booked against."""

    def book(self, model: str, most: Decimal) -> object | None:
        """Set aside `most` (USD) for one call by `model`; None when what is left today cannot cover it."""

    def settle(self, booking: object, usage: Usage) -> None:
        """Replace a booking by what the call was billed (nothing, when no reply came)."""
