"""`ModelError`: a failed call to a model (Claude, or one served over the OpenAI API), its kind, and the message
users see for each kind: both clients fail alike, so whoever calls a model catches one error."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal

from modelcalls import NO_USAGE, Usage

ModelErrorKind = Literal[
    "rate_limited", "server_error", "timeout", "connection", "malformed", "refused", "auth", "bad_request"
]

RATE_LIMITED_MESSAGE: Final = (
    "The answer service is busy right now (rate limited). Please try again in a minute."
)
SERVER_ERROR_MESSAGE: Final = (
    "The answer service is having trouble right now. Please try again in a few minutes."
)
TIMEOUT_MESSAGE: Final = "The answer service took too long to respond. Please try again."
CONNECTION_MESSAGE: Final = "The answer service could not be reached. Please try again in a few minutes."
MALFORMED_MESSAGE: Final = "The answer service sent back a reply that could not be read. Please try again."
REFUSED_MESSAGE: Final = "The answer service declined to answer this request."
AUTH_MESSAGE: Final = (
    "The answer service rejected our credentials. An administrator needs to check the API key settings."
)
BAD_REQUEST_MESSAGE: Final = "The answer service could not accept this request. Please report this problem."

MESSAGES: Final[Mapping[ModelErrorKind, str]] = MappingProxyType(
    {
        "rate_limited": RATE_LIMITED_MESSAGE,
        "server_error": SERVER_ERROR_MESSAGE,
        "timeout": TIMEOUT_MESSAGE,
        "connection": CONNECTION_MESSAGE,
        "malformed": MALFORMED_MESSAGE,
        "refused": REFUSED_MESSAGE,
        "auth": AUTH_MESSAGE,
        "bad_request": BAD_REQUEST_MESSAGE,
    }
)

RETRYABLE_KINDS: Final = frozenset({"rate_limited", "server_error", "timeout", "connection"})


class ModelError(Exception):
    """A failed call: `kind` for code, `message` for users, `detail` for logs (never holds the key).

    `usage` is what a reply that came back but could not be used (a refusal, a malformed answer) was billed;
    nothing when no reply came.
    """

    def __init__(
        self,
        kind: ModelErrorKind,
        detail: str,
        status_code: int | None = None,
        request_id: str | None = None,
        usage: Usage = NO_USAGE,
    ) -> None:
        self.kind: ModelErrorKind = kind
        self.message: str = MESSAGES[kind]
        self.detail = detail
        self.status_code = status_code
        self.request_id = request_id
        self.usage = usage
        super().__init__(self.message)

    @property
    def retryable(self) -> bool:
        """Whether the same call might succeed later."""
        return self.kind in RETRYABLE_KINDS

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kind, self.detail, self.status_code, self.request_id, self.usage))

    def __repr__(self) -> str:
        return f"ModelError(kind={self.kind!r}, status_code={self.status_code!r}, detail={self.detail!r})"
