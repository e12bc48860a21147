"""The Claude client: one Messages API call, what it cost, and how it failed, for every app that calls Claude.

Answer synthesis (`garden.answering.synthesis.claude`) and the claim judge (`claimcheck.judges.claude`) both call Claude
through this package and nothing else, so the SDK, its retries, prices and reply checks live in one place.

`config` holds `ClaudeConfig` (how to reach Claude) and `claude_config()` (the one the settings describe);
`client` makes the call (`call_claude`), `streaming` a streamed one (`ClaudeStream`), mapping every SDK failure to a `ClaudeError` with the key redacted;
`retries` bounds the SDK's retries; `replies` reads a reply strictly into a `ClaudeReply`; `pricing` knows
what a model costs (`cost_usd`, `Usage`); `budget` the protocol a spending limit follows (`Budget`); `errors`
holds `ClaudeError` and the messages users see. Plain Python: only `claude_config()` reads Django settings,
when called.
"""

from providers.claude.budget import Budget
from providers.claude.client import call_claude
from providers.claude.config import ClaudeConfig, claude_config
from providers.claude.errors import (
    AUTH_MESSAGE,
    BAD_REQUEST_MESSAGE,
    CONNECTION_MESSAGE,
    MALFORMED_MESSAGE,
    MESSAGES,
    RATE_LIMITED_MESSAGE,
    REFUSED_MESSAGE,
    RETRYABLE_KINDS,
    SERVER_ERROR_MESSAGE,
    TIMEOUT_MESSAGE,
    ClaudeError,
    ClaudeErrorKind,
)
from providers.claude.pricing import DEFAULT_PRICES, FALLBACK_PRICE, NO_USAGE, Usage, cost_usd, price_for
from providers.claude.replies import ClaudeReply
from providers.claude.streaming import ClaudeStream

__all__ = [
    "AUTH_MESSAGE",
    "BAD_REQUEST_MESSAGE",
    "CONNECTION_MESSAGE",
    "DEFAULT_PRICES",
    "FALLBACK_PRICE",
    "MALFORMED_MESSAGE",
    "MESSAGES",
    "NO_USAGE",
    "RATE_LIMITED_MESSAGE",
    "REFUSED_MESSAGE",
    "RETRYABLE_KINDS",
    "SERVER_ERROR_MESSAGE",
    "TIMEOUT_MESSAGE",
    "Budget",
    "ClaudeConfig",
    "ClaudeError",
    "ClaudeErrorKind",
    "ClaudeReply",
    "ClaudeStream",
    "Usage",
    "call_claude",
    "claude_config",
    "cost_usd",
    "price_for",
]
