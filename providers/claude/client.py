"""`call_claude`: one request through the official `anthropic` SDK, as a `ModelReply` or a `ModelError`.

Written against anthropic 2.x, which speaks API version 2026-10-21 and sends the key as
`Authorization: Bearer`. Retries are the SDK's own, bounded by `retries.RetryWaitLimit`; the reply is read by
`replies.read_reply`. Every SDK failure becomes a `ModelError` of one kind, and the API key never appears in
one or in this module's logs.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any, NotRequired, TypedDict

import anthropic

from modelcalls import ModelReply
from providers.claude.config import ClaudeConfig
from providers.claude.replies import read_reply
from providers.claude.retries import RetryWaitLimit, ServerWaitTooLong
from providers.errors import ModelError, ModelErrorKind

logger = logging.getLogger(__name__)

DETAIL_LIMIT = 600
_REDACTED = "[redacted]"
_KEY_PATTERNS = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-.~+/=]{6,}"),
)


class Call(TypedDict):
    """One call's arguments, as `call_claude` takes them and every model's client after it (`providers.chat`)."""

    model: str
    system: str
    messages: list[dict[str, Any]]
    max_tokens: int
    tools: NotRequired[list[dict[str, Any]] | None]
    tool_choice: NotRequired[dict[str, Any] | None]


def call_claude(
    config: ClaudeConfig,
    *,
    model: str,
    system: str,
    messages: list[dict[str, Any]],
    max_tokens: int,
    tools: list[dict[str, Any]] | None = None,
    tool_choice: dict[str, Any] | None = None,
) -> ModelReply:
    """Send one Messages API request and return the reply, or raise `ModelError`.

    No sampling parameter (temperature, top_p, top_k) is sent: API version 2026-10-21, the one anthropic 2.x
    speaks, answers 400 to any of them, even at its default value.

    Raises `ModelError` with kind "refused" for a refusal, and "malformed" for a reply that is not a
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
    return reply_of(
        lambda: client.messages.create(**kwargs),
        lambda outcome, latency_ms: read_reply(
            outcome, requested_model=model, tool_choice=tool_choice, config=config, latency_ms=latency_ms
        ),
        lambda exc: _to_claude_error(exc, config),
        _SDK_FAILURES,
        api_key=config.api_key,
        who=f"Claude ({model})",
    )


def reply_of(
    send: Callable[[], object],
    read: Callable[[object, int], ModelReply],
    failure: Callable[[Exception], ModelError],
    failures: tuple[type[Exception], ...],
    *,
    api_key: str,
    who: str,
) -> ModelReply:
    """One SDK call, whichever SDK: `send()` makes it, `read(outcome, latency_ms)` reads what came back, and an
    exception of `failures` becomes `failure(exc)`. A `ModelError` comes out with the key redacted from its
    detail; failure and reply are both logged, naming `who`."""
    started = time.monotonic()
    outcome: object
    try:
        outcome = send()
    except failures as exc:
        outcome = failure(exc)
    latency_ms = round((time.monotonic() - started) * 1000)
    try:
        if isinstance(outcome, ModelError):
            # Raised outside the `except` so it has no __context__: the SDK's exception holds the
            # request, and with it the Authorization header.
            raise outcome
        reply = read(outcome, latency_ms)
    except ModelError as err:
        err.detail = _redact(err.detail, api_key)
        logger.warning("%s failed after %d ms (%s): %s", who, latency_ms, err.kind, err.detail)
        raise
    logger.info(
        "%s replied in %d ms as %s: %d input + %d output tokens, $%s, stop_reason=%s",
        who,
        reply.latency_ms,
        reply.model,
        reply.input_tokens,
        reply.output_tokens,
        reply.cost_usd,
        reply.stop_reason,
    )
    return reply


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
        middleware=[RetryWaitLimit(max_retries, max_retry_wait_seconds)],
    )


def _kind_for_status(status_code: int) -> ModelErrorKind:
    if status_code == 429:
        return "rate_limited"
    if status_code in (401, 403):
        return "auth"
    if status_code == 408:
        return "timeout"
    if 400 <= status_code < 500:
        return "bad_request"
    return "server_error"


_SDK_FAILURES = (anthropic.AnthropicError, ServerWaitTooLong, json.JSONDecodeError, UnicodeDecodeError)


def _to_claude_error(exc: Exception, config: ClaudeConfig) -> ModelError:
    attempts = config.max_retries + 1
    if isinstance(exc, ServerWaitTooLong):
        return ModelError(
            _kind_for_status(exc.status_code),
            f"HTTP {exc.status_code}; the server asked to wait {exc.wait_seconds:.1f} s before retrying, "
            f"more than the {config.max_retry_wait_seconds:g} s allowed, so no retry was made: {exc.body}",
            exc.status_code,
            exc.request_id,
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return ModelError(
            "timeout", f"No reply within {config.timeout_seconds:g} s, on each of {attempts} attempt(s)."
        )
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__
        reason = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
        return ModelError("connection", f"Could not connect after {attempts} attempt(s): {reason}")
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ModelError(
            "malformed", f"HTTP {exc.status_code}: {exc.message} Body: {exc.body!r}", exc.status_code
        )
    if isinstance(exc, anthropic.APIStatusError):
        explanation = exc.api_message or (exc.body if isinstance(exc.body, str) else None) or str(exc)
        error_type = f" {exc.type}" if exc.type else ""
        return ModelError(
            _kind_for_status(exc.status_code),
            f"HTTP {exc.status_code}{error_type} after {attempts} attempt(s): {explanation}",
            exc.status_code,
            exc.request_id,
        )
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return ModelError("malformed", f"The 200 reply body is not valid JSON: {exc}", 200)
    if isinstance(exc, anthropic.CredentialsError):
        return ModelError("auth", f"{type(exc).__name__}: {exc}")
    return ModelError("server_error", f"{type(exc).__name__}: {exc}")


def _redact(text: str, api_key: str) -> str:
    """`text` without the API key or anything shaped like a key, cut to `DETAIL_LIMIT` characters."""
    if api_key.strip():
        text = text.replace(api_key, _REDACTED)
    for pattern in _KEY_PATTERNS:
        text = pattern.sub(lambda match: f"{match.group(1) if match.groups() else ''}{_REDACTED}", text)
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 1] + "…"
