"""What an action says when it does not do what was asked: the outcome, which each surface renders in its own way
(an HTTP status, an MCP tool error, a command's error), and the message, which every surface shows as it is."""

from __future__ import annotations

from enum import StrEnum

from garden.errors import UserFacingError


class Outcome(StrEnum):
    """Why an action was refused, as the surfaces tell it apart (the API: 403, 404, 400, 429, 503, 404)."""

    FORBIDDEN = "forbidden"  # the caller may not: no role, a token without the scope, no session to mark as
    NOT_FOUND = "not_found"  # nothing the caller may see has this id or name
    INVALID = "invalid"  # the input: an empty or over-long question or text, a note over its limit
    LIMITED = "limited"  # too many calls this minute (or reports this day): try again in `retry_after` s
    BUSY = "busy"  # every thread allowed to wait on Claude is waiting: try again shortly
    WITHHELD = "withheld"  # the answer exists but draws on a note the caller may no longer read


class Refused(UserFacingError):
    """The action was not done, and nothing of it was kept."""

    def __init__(
        self,
        outcome: Outcome,
        message: str,
        *,
        retry_after: int | None = None,
        address: str = "",
        role_missing: bool = False,
    ) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.retry_after = retry_after
        self.address = address  # a withheld answer's page, which says why to whoever opens it
        # Forbidden for want of a role (not a token's scope): a surface may say how to get one its own way.
        self.role_missing = role_missing
