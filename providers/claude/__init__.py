"""The Claude client: one Messages API call and what it cost, for every app that calls Claude.

Answer synthesis (`garden.answering.synthesis.claude`) and the claim judge (`claimcheck.judges.claude`) both call Claude
through this package and nothing else, so the SDK, its retries, prices and reply checks live in one place.

`config` holds `ClaudeConfig` (how to reach Claude) and `claude_config()` (the one the settings describe);
`client` makes the call (`call_claude`), `streaming` a streamed one (`ClaudeStream`), mapping every SDK failure to a
`providers.errors.ModelError` with the key redacted; `retries` bounds the SDK's retries; `replies` reads a reply
strictly into a `modelcalls.ModelReply`; `pricing` knows what a model costs (`cost_usd`). Plain Python: only
`claude_config()` reads Django settings, when called. The SDK is imported with `call_claude` or `ClaudeStream`,
not with the package: every Django process imports the prices and the config, few call Claude, and the SDK takes
a second of each start-up.
"""

from typing import TYPE_CHECKING

from providers.claude.config import ClaudeConfig, claude_config
from providers.claude.pricing import DEFAULT_PRICES, FALLBACK_PRICE, cost_usd, price_for
from providers.lazy import lazy_getattr

if TYPE_CHECKING:
    from providers.claude.client import call_claude
    from providers.claude.streaming import ClaudeStream

__all__ = [
    "DEFAULT_PRICES",
    "FALLBACK_PRICE",
    "ClaudeConfig",
    "ClaudeStream",
    "call_claude",
    "claude_config",
    "cost_usd",
    "price_for",
]


# `call_claude` and `ClaudeStream`, imported with the SDK when first asked for.
__getattr__ = lazy_getattr(
    __name__, {"call_claude": "providers.claude.client", "ClaudeStream": "providers.claude.streaming"}
)
