"""One call to Claude through the official `anthropic` SDK, as a `ClaudeReply` or a `ClaudeError`.

Shared by answer synthesis and the claim judge. Pure Python (no Django), written against anthropic 2.x,
which speaks API version 2026-10-21 and sends the key as `Authorization: Bearer`.

Retries are the SDK's own: it retries connection errors, timeouts, 408, 409, 429 and 5xx (529 included)
up to `max_retries` times. Between attempts it waits what the server asked for (`retry-after-ms`, else
`retry-after` in seconds or as an HTTP date) and otherwise backs off exponentially (0.5 s, 1 s, 2 s ...
capped at 8 s, minus up to 25 % jitter; a `retry-after` of 0 also means backoff). The SDK puts no upper
bound on a server-requested wait, so a client-level middleware gives up at once when the server asks for
more than `max_retry_wait_seconds`. The API key never appears in a `ClaudeError` or in this module's logs.
"""

from __future__ import annotations

import email.utils
import json
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal, NoReturn, TypeGuard

import anthropic
from anthropic.types import Message

if TYPE_CHECKING:
    import httpx2

logger = logging.getLogger(__name__)

ClaudeErrorKind = Literal[
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

MESSAGES: Final[Mapping[ClaudeErrorKind, str]] = MappingProxyType(
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

# USD per million (input, output) tokens, by model-name prefix; the longest matching prefix wins.
DEFAULT_PRICES: Final[Mapping[str, tuple[Decimal, Decimal]]] = MappingProxyType(
    {
        "claude-haiku": (Decimal("1"), Decimal("5")),
        "claude-3-haiku": (Decimal("0.25"), Decimal("1.25")),
        "claude-3-5-haiku": (Decimal("0.80"), Decimal("4")),
        "claude-sonnet": (Decimal("3"), Decimal("15")),
        "claude-3-5-sonnet": (Decimal("3"), Decimal("15")),
        "claude-3-7-sonnet": (Decimal("3"), Decimal("15")),
        "claude-opus": (Decimal("5"), Decimal("25")),
        "claude-opus-4-0": (Decimal("15"), Decimal("75")),
        "claude-opus-4-1": (Decimal("15"), Decimal("75")),
        "claude-opus-4-2025": (Decimal("15"), Decimal("75")),
        "claude-3-opus": (Decimal("15"), Decimal("75")),
    }
)
# Unknown models are costed high on purpose so spend limits err on the safe side.
FALLBACK_PRICE: Final = (Decimal("15"), Decimal("75"))
CACHE_WRITE_MULTIPLIER: Final = Decimal("1.25")
CACHE_READ_MULTIPLIER: Final = Decimal("0.1")
COST_QUANTUM: Final = Decimal("0.000001")

DETAIL_LIMIT = 600
_REDACTED = "[redacted]"
_KEY_PATTERNS = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-.~+/=]{6,}"),
)
_FORCING_TOOL_CHOICES = frozenset({"tool", "any"})


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


@dataclass(frozen=True)
class Usage:
    """What a call consumed and what it cost, as Anthropic bills it."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal = Decimal(0)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cost_usd + other.cost_usd,
        )


NO_USAGE: Final = Usage()


@dataclass(frozen=True)
class ClaudeReply:
    """What one successful call produced, with its token usage and cost."""

    text: str
    tool_input: dict[str, Any] | None
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal
    latency_ms: int
    stop_reason: str | None

    @property
    def usage(self) -> Usage:
        return Usage(self.input_tokens, self.output_tokens, self.cost_usd)


class ClaudeError(Exception):
    """A failed call: `kind` for code, `message` for users, `detail` for logs (never holds the key).

    `usage` is what a reply that came back but could not be used (a refusal, a malformed answer) was billed;
    nothing when no reply came.
    """

    def __init__(
        self,
        kind: ClaudeErrorKind,
        detail: str,
        status_code: int | None = None,
        request_id: str | None = None,
        usage: Usage = NO_USAGE,
    ) -> None:
        self.kind: ClaudeErrorKind = kind
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
        return f"ClaudeError(kind={self.kind!r}, status_code={self.status_code!r}, detail={self.detail!r})"


def price_for(model: str, prices: Mapping[str, tuple[Decimal, Decimal]]) -> tuple[Decimal, Decimal]:
    """USD per million (input, output) tokens for `model`: longest matching prefix, else `FALLBACK_PRICE`."""
    matches = [prefix for prefix in prices if model.startswith(prefix)]
    return prices[max(matches, key=len)] if matches else FALLBACK_PRICE


def cost_usd(
    model: str,
    input_tokens: int,
    output_tokens: int,
    prices: Mapping[str, tuple[Decimal, Decimal]],
    *,
    cache_write_tokens: int = 0,
    cache_read_tokens: int = 0,
) -> Decimal:
    """The cost of one call in USD, to 0.000001; cache writes and reads priced at Anthropic's multipliers."""
    input_price, output_price = price_for(model, prices)
    weighted_input = (
        input_tokens + CACHE_WRITE_MULTIPLIER * cache_write_tokens + CACHE_READ_MULTIPLIER * cache_read_tokens
    )
    total = (weighted_input * input_price + output_tokens * output_price) / Decimal(1_000_000)
    return total.quantize(COST_QUANTUM, rounding=ROUND_HALF_UP)


def call_claude(
    config: ClaudeConfig,
    *,
    model: str,
    system: str,
    messages: list[dict[str, Any]],
    max_tokens: int,
    tools: list[dict[str, Any]] | None = None,
    tool_choice: dict[str, Any] | None = None,
) -> ClaudeReply:
    """Send one Messages API request and return the reply, or raise `ClaudeError`.

    No sampling parameter (temperature, top_p, top_k) is sent: API version 2026-10-21, the one anthropic 2.x
    speaks, answers 400 to any of them, even at its default value.

    Raises `ClaudeError` with kind "refused" for a refusal, and "malformed" for a reply that is not a
    readable message, or that lacks the tool call a forcing `tool_choice` asked for.
    """
    kwargs: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if system:
        kwargs["system"] = system
    if tools is not None:
        kwargs["tools"] = tools
    if tool_choice is not None:
        kwargs["tool_choice"] = tool_choice

    client = _client(
        config.api_key,
        config.base_url,
        config.timeout_seconds,
        config.max_retries,
        config.max_retry_wait_seconds,
    )
    started = time.monotonic()
    outcome: object
    try:
        outcome = client.messages.create(**kwargs)
    except _SDK_FAILURES as exc:
        outcome = _to_claude_error(exc, config)
    latency_ms = round((time.monotonic() - started) * 1000)
    try:
        if isinstance(outcome, ClaudeError):
            # Raised outside the `except` so it has no __context__: the SDK's exception holds the
            # request, and with it the Authorization header.
            raise outcome
        reply = _read_reply(
            outcome, requested_model=model, tool_choice=tool_choice, config=config, latency_ms=latency_ms
        )
    except ClaudeError as err:
        err.detail = _redact(err.detail, config.api_key)
        logger.warning(
            "Claude call to %s failed after %d ms (%s): %s", model, latency_ms, err.kind, err.detail
        )
        raise
    logger.info(
        "Claude %s replied in %d ms: %d input + %d output tokens, $%s, stop_reason=%s",
        reply.model,
        reply.latency_ms,
        reply.input_tokens,
        reply.output_tokens,
        reply.cost_usd,
        reply.stop_reason,
    )
    return reply


class _ServerWaitTooLong(Exception):
    """The server asked to wait longer than allowed before the SDK's next retry."""

    def __init__(self, status_code: int, wait_seconds: float, body: str, request_id: str | None) -> None:
        super().__init__(status_code, wait_seconds)
        self.status_code = status_code
        self.wait_seconds = wait_seconds
        self.body = body
        self.request_id = request_id


class _RetryWaitLimit(anthropic.Middleware):
    """Gives up instead of letting the SDK sleep longer than `limit_seconds` before a retry."""

    def __init__(self, max_retries: int, limit_seconds: float) -> None:
        self._max_retries = max_retries
        self._limit_seconds = limit_seconds

    def handle(
        self, request: anthropic.APIRequest, call_next: anthropic.CallNext
    ) -> anthropic.APIResponse[Any]:
        response = call_next(request)
        if request.retries_taken >= self._max_retries or not _sdk_would_retry(response.http_response):
            return response
        wait_seconds = _retry_after_seconds(response.headers)
        if wait_seconds is None or wait_seconds <= self._limit_seconds:
            return response
        http_response = response.http_response
        try:
            body = http_response.read().decode("utf-8", "replace")
        finally:
            http_response.close()
        raise _ServerWaitTooLong(
            http_response.status_code, wait_seconds, body, http_response.headers.get("request-id")
        )


def _sdk_would_retry(response: httpx2.Response) -> bool:
    # Mirrors the SDK's status policy (anthropic 2.x `_should_retry`), including the x-should-retry override.
    should_retry = response.headers.get("x-should-retry")
    if should_retry in ("true", "false"):
        return should_retry == "true"
    return response.status_code in (408, 409, 429) or response.status_code >= 500


def _retry_after_seconds(headers: httpx2.Headers) -> float | None:
    # Read the way the SDK reads it: retry-after-ms, then retry-after as seconds, then as an HTTP date.
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            pass
    raw = headers.get("retry-after")
    parsed = email.utils.parsedate_tz(raw) if raw else None
    return None if parsed is None else float(email.utils.mktime_tz(parsed) - time.time())


@lru_cache(maxsize=16)
def _client(
    api_key: str,
    base_url: str | None,
    timeout_seconds: float,
    max_retries: int,
    max_retry_wait_seconds: float,
) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key=api_key,
        base_url=base_url,
        timeout=timeout_seconds,
        max_retries=max_retries,
        middleware=[_RetryWaitLimit(max_retries, max_retry_wait_seconds)],
    )


def _kind_for_status(status_code: int) -> ClaudeErrorKind:
    if status_code == 429:
        return "rate_limited"
    if status_code in (401, 403):
        return "auth"
    if status_code == 408:
        return "timeout"
    if 400 <= status_code < 500:
        return "bad_request"
    return "server_error"


_SDK_FAILURES = (anthropic.AnthropicError, _ServerWaitTooLong, json.JSONDecodeError, UnicodeDecodeError)


def _to_claude_error(exc: Exception, config: ClaudeConfig) -> ClaudeError:
    attempts = config.max_retries + 1
    if isinstance(exc, _ServerWaitTooLong):
        return ClaudeError(
            _kind_for_status(exc.status_code),
            f"HTTP {exc.status_code}; the server asked to wait {exc.wait_seconds:.1f} s before retrying, "
            f"more than the {config.max_retry_wait_seconds:g} s allowed, so no retry was made: {exc.body}",
            exc.status_code,
            exc.request_id,
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return ClaudeError(
            "timeout", f"No reply within {config.timeout_seconds:g} s, on each of {attempts} attempt(s)."
        )
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__
        reason = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
        return ClaudeError("connection", f"Could not connect after {attempts} attempt(s): {reason}")
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ClaudeError(
            "malformed", f"HTTP {exc.status_code}: {exc.message} Body: {exc.body!r}", exc.status_code
        )
    if isinstance(exc, anthropic.APIStatusError):
        explanation = exc.api_message or (exc.body if isinstance(exc.body, str) else None) or str(exc)
        error_type = f" {exc.type}" if exc.type else ""
        return ClaudeError(
            _kind_for_status(exc.status_code),
            f"HTTP {exc.status_code}{error_type} after {attempts} attempt(s): {explanation}",
            exc.status_code,
            exc.request_id,
        )
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return ClaudeError("malformed", f"The 200 reply body is not valid JSON: {exc}", 200)
    if isinstance(exc, anthropic.CredentialsError):
        return ClaudeError("auth", f"{type(exc).__name__}: {exc}")
    return ClaudeError("server_error", f"{type(exc).__name__}: {exc}")


def _read_reply(
    message: object,
    *,
    requested_model: str,
    tool_choice: dict[str, Any] | None,
    config: ClaudeConfig,
    latency_ms: int,
) -> ClaudeReply:
    # Without strict validation the SDK hands back whatever the body held: a str for a non-JSON content
    # type, None for `null`, or a Message whose fields are None or of the wrong type. Check everything.
    if not isinstance(message, Message):
        _malformed(f"Expected a message object, got {type(message).__name__}: {message!r}")
    stop_reason = message.stop_reason if isinstance(message.stop_reason, str) else None
    model = message.model if isinstance(message.model, str) and message.model else requested_model
    usage = message.usage
    input_tokens = getattr(usage, "input_tokens", None)
    output_tokens = getattr(usage, "output_tokens", None)
    counted = False
    billed = NO_USAGE
    if _is_count(input_tokens) and _is_count(output_tokens):
        counted = True
        billed = _billed(model, input_tokens, output_tokens, usage, config)
    if stop_reason == "refusal":
        details = message.stop_details
        raise ClaudeError(
            "refused",
            f"stop_reason=refusal, category={getattr(details, 'category', None)!r}, "
            f"explanation={getattr(details, 'explanation', None)!r}, "
            f"tokens={input_tokens!r}+{output_tokens!r}, id={message.id!r}",
            200,
            usage=billed,
        )
    if not counted:
        _malformed(f"usage lacks token counts: {usage!r}")
    try:
        text, tool_input = _read_content(message, stop_reason, tool_choice)
    except ClaudeError as err:
        err.usage = billed  # the reply was billed even though it cannot be used
        raise
    return ClaudeReply(
        text=text,
        tool_input=tool_input,
        model=model,
        input_tokens=billed.input_tokens,
        output_tokens=billed.output_tokens,
        cost_usd=billed.cost_usd,
        latency_ms=latency_ms,
        stop_reason=stop_reason,
    )


def _billed(model: str, input_tokens: int, output_tokens: int, usage: object, config: ClaudeConfig) -> Usage:
    """A reply's token counts and what they cost (cache writes and reads as the usage reports them)."""
    cache_write = getattr(usage, "cache_creation_input_tokens", None)
    cache_read = getattr(usage, "cache_read_input_tokens", None)
    cost = cost_usd(
        model,
        input_tokens,
        output_tokens,
        config.prices,
        cache_write_tokens=cache_write if _is_count(cache_write) else 0,
        cache_read_tokens=cache_read if _is_count(cache_read) else 0,
    )
    return Usage(input_tokens, output_tokens, cost)


def _read_content(
    message: Message, stop_reason: str | None, tool_choice: dict[str, Any] | None
) -> tuple[str, dict[str, Any] | None]:
    """The reply's text and its first tool call's input; malformed when a forced tool call is missing."""
    if not isinstance(message.content, list):
        _malformed(f"content is not a list: {message.content!r}")
    texts: list[str] = []
    tool_input: dict[str, Any] | None = None
    tool_name: object = None
    for block in message.content:
        block_type = getattr(block, "type", None)
        if block_type == "text":
            text = getattr(block, "text", None)
            if not isinstance(text, str):
                _malformed(f"a text block has no text: {block!r}")
            texts.append(text)
        elif block_type == "tool_use" and tool_input is None:
            candidate = getattr(block, "input", None)
            if not isinstance(candidate, dict):
                _malformed(f"a tool_use block has no input object: {block!r}")
            tool_input = dict(candidate)
            tool_name = getattr(block, "name", None)

    choice_type = (tool_choice or {}).get("type")
    if choice_type in _FORCING_TOOL_CHOICES:
        if tool_input is None:
            _malformed(
                f"tool_choice {tool_choice!r} forced a tool call but no tool_use block came back "
                f"(stop_reason={stop_reason!r}, content={message.content!r})"
            )
        if choice_type == "tool" and tool_name != (tool_choice or {}).get("name"):
            _malformed(f"tool_choice {tool_choice!r} forced a tool call but {tool_name!r} was called")
        if stop_reason == "max_tokens":
            _malformed("The forced tool call was cut off at max_tokens, so its input is incomplete.")
    return "".join(texts), tool_input


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _malformed(detail: str) -> NoReturn:
    raise ClaudeError("malformed", detail, 200)


def _redact(text: str, api_key: str) -> str:
    """`text` without the API key or anything shaped like a key, cut to `DETAIL_LIMIT` characters."""
    if api_key.strip():
        text = text.replace(api_key, _REDACTED)
    for pattern in _KEY_PATTERNS:
        text = pattern.sub(lambda match: f"{match.group(1) if match.groups() else ''}{_REDACTED}", text)
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 1] + "…"
