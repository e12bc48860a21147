"""Fact-check a text the caller wrote, claim by claim, against the garden's passages the caller may read (or
against sources the caller gives: the MCP `check` tool's `sources`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dashboard.actions.callers import Caller, Operator, admit, caller_reader, caller_slot, spent_by
from dashboard.actions.refusals import Outcome, Refused
from dashboard.permissions import check_mode, may_check
from garden.models import Passage
from verifier.checking import Checked, CheckError, garden_check, sources_check
from verifier.scopes import TokenScope

CHECK_FORBIDDEN = (
    "Fact-checking is for readers: log in as a reader (or above) to use this endpoint "
    "(visitors may check text only when ANONYMOUS_CAN_CHECK is on)."
)


@dataclass(frozen=True)
class TextChecked:
    """A text checked: its claims judged, against the garden's `passages` (None: against the sources given)."""

    checked: Checked
    passages: list[Passage] | None


def text_check(caller: Caller, text: str | None, sources: Sequence[str] | None = None) -> TextChecked:
    """Check `text`'s claims, with the judge panel the caller may spend (visitors: the local judge alone).
    Refused: forbidden, limited, invalid (an empty or over-long text, bad sources), busy."""
    admit(caller, TokenScope.CHECK, may=may_check, forbidden=CHECK_FORBIDDEN, limit="check")
    mode = None if isinstance(caller, Operator) else check_mode(caller)
    slot = caller_slot(caller)
    with spent_by(caller):
        try:
            if sources is None:
                checked, passages = garden_check(
                    text, mode=mode, claude_slot=slot, reader=caller_reader(caller)
                )
                return TextChecked(checked, passages)
            return TextChecked(sources_check(text, sources, mode=mode, claude_slot=slot), None)
        except CheckError as error:
            raise Refused(Outcome.INVALID, error.message) from None
