"""Reading a reply: `ModelReply` from a Messages API message, checked strictly, or a `ModelError`."""

from __future__ import annotations

from typing import Any, NoReturn, TypeGuard

from anthropic.types import Message

from modelcalls import NO_USAGE, ModelReply, Usage
from providers.claude.config import ClaudeConfig
from providers.claude.pricing import cost_usd
from providers.errors import ModelError

_FORCING_TOOL_CHOICES = frozenset({"tool", "any"})


def read_reply(
    message: object,
    *,
    requested_model: str,
    tool_choice: dict[str, Any] | None,
    config: ClaudeConfig,
    latency_ms: int,
) -> ModelReply:
    """The reply `message` holds; `ModelError` "refused" for a refusal, "malformed" for anything unreadable.

    A reply that came back but cannot be used still carries what it was billed, as the error's `usage`.
    """
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
        raise ModelError(
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
    except ModelError as err:
        err.usage = billed  # the reply was billed even though it cannot be used
        raise
    return ModelReply.of(
        billed, text=text, tool_input=tool_input, model=model, latency_ms=latency_ms, stop_reason=stop_reason
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
    raise ModelError("malformed", detail, 200)
