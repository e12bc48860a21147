"""How to reach Claude: `ClaudeConfig`, and `claude_config()`, the one this deployment's settings describe."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from providers.claude.pricing import DEFAULT_PRICES


def _default_prices() -> Mapping[str, tuple[Decimal, Decimal]]:
    return DEFAULT_PRICES


@dataclass(frozen=True)
class ClaudeConfig:
    """How to reach Claude; the API key is left out of `repr()`."""

    api_key: str = field(repr=False)
    base_url: str | None = None
    timeout_seconds: float = 30.0
    max_retries: int = 2
    max_retry_wait_seconds: float = 60.0
    prices: Mapping[str, tuple[Decimal, Decimal]] = field(default_factory=_default_prices, hash=False)

    def __post_init__(self) -> None:
        if self.timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        if self.max_retries < 0:
            raise ValueError("max_retries must be zero or more")
        if self.max_retry_wait_seconds < 0:
            raise ValueError("max_retry_wait_seconds must be zero or more")


def claude_config() -> ClaudeConfig | None:
    """The Anthropic client settings, or None when no API key is configured."""
    # Imported here, not above, so that the client and the judges that use it stay plain Python.
    from django.conf import settings

    if not settings.ANTHROPIC_API_KEY:
        return None
    return ClaudeConfig(
        api_key=settings.ANTHROPIC_API_KEY,
        base_url=settings.ANTHROPIC_BASE_URL,
        timeout_seconds=settings.CLAUDE_TIMEOUT_SECONDS,
        max_retries=settings.CLAUDE_MAX_RETRIES,
    )
