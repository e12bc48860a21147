"""`call_openai`: one chat completion through the official `openai` SDK, as a `ModelReply` or a `ModelError`.

The request is the one a Claude call makes, written as a chat completion: the system prompt as the first message,
and a forced tool call (the judge's) as a strict JSON schema (`response_format`), whose reply is read back as the
tool's input. The reply and its failures are the ones a Claude call gives (`ModelReply`, `ModelError` and the
messages readers see), so whoever calls a model reads one kind of reply and one kind of failure whichever model
answered. Retries are the SDK's own: connection errors, timeouts, 408, 409, 429 and 5xx, with exponential backoff,
and a server's `retry-after` honoured up to the SDK's two minutes. The API key never appears in an error or a log.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from typing import Any, NoReturn, TypeGuard, Unpack

import openai
from openai.types.chat import ChatCompletion

from modelcalls import ModelReply, Usage
from providers.claude.client import Call, _kind_for_status, reply_of
from providers.claude.pricing import cost_usd
from providers.errors import ModelError
from providers.openai.config import OpenAIConfig

logger = logging.getLogger(__name__)

# The chat API's finish reasons, as the Messages API names the same stops (what the callers read).
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}

FAILURES = (openai.OpenAIError, json.JSONDecodeError, UnicodeDecodeError)


def chat_request(**call: Unpack[Call]) -> dict[str, Any]:
    """The chat completion's arguments for a call written as Claude's (`providers.claude.call_claude`).

    `max_tokens`, not `max_completion_tokens`: the name the OpenAI-compatible servers (Ollama, vLLM, llama.cpp,
    LM Studio) all read.
    """
    system = call["system"]
    request: dict[str, Any] = {
        "model": call["model"],
        "max_tokens": call["max_tokens"],
        "messages": ([{"role": "system", "content": system}] if system else []) + call["messages"],
    }
    tool = forced_tool(call.get("tools"), call.get("tool_choice"))
    if tool is not None:
        request["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "schema": tool["input_schema"],
                "strict": True,
            },
        }
    return request


def forced_tool(
    tools: list[dict[str, Any]] | None, tool_choice: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The tool a forcing `tool_choice` calls for (by name, or the first for "any"); None when none is forced."""
    kind = (tool_choice or {}).get("type")
    if not tools or kind not in ("tool", "any"):
        return None
    if kind == "any":
        return tools[0]
    return next(tool for tool in tools if tool["name"] == (tool_choice or {}).get("name"))


def call_openai(config: OpenAIConfig, **call: Unpack[Call]) -> ModelReply:
    """Send one chat completion and return the reply, or raise `ModelError` (as `call_claude` does).

    A forced tool call's reply is its JSON read as `tool_input`; one that is not a JSON object is "malformed".
    """
    request = chat_request(**call)
    model = call["model"]
    client = client_for(config)
    return reply_of(
        lambda: client.chat.completions.create(**request),
        lambda outcome, latency_ms: _read(outcome, model, "response_format" in request, config, latency_ms),
        lambda exc: to_error(exc, config),
        FAILURES,
        api_key=config.api_key,
        who=f"The served model {model} at {config.base_url}",
    )


def client_for(config: OpenAIConfig) -> openai.OpenAI:
    return _client(config.api_key, config.base_url, config.timeout_seconds, config.max_retries)


@lru_cache(maxsize=16)
def _client(api_key: str, base_url: str | None, timeout_seconds: float, max_retries: int) -> openai.OpenAI:
    return openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_seconds, max_retries=max_retries)


def to_error(exc: BaseException, config: OpenAIConfig) -> ModelError:
    """An SDK failure as the `ModelError` of its kind."""
    attempts = config.max_retries + 1
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(
            "timeout", f"No reply within {config.timeout_seconds:g} s, on each of {attempts} attempt(s)."
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        reason = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
        return ModelError(
            "connection", f"Could not connect to {config.base_url} after {attempts} attempt(s): {reason}"
        )
    if isinstance(exc, openai.APIResponseValidationError):
        return ModelError("malformed", f"HTTP {exc.status_code}: {exc.message} Body: {exc.body!r}", 200)
    if isinstance(exc, openai.APIStatusError):
        return ModelError(
            _kind_for_status(exc.status_code),
            f"HTTP {exc.status_code} after {attempts} attempt(s): {exc.message}",
            exc.status_code,
            exc.request_id,
        )
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return ModelError("malformed", f"The 200 reply body is not valid JSON: {exc}", 200)
    return ModelError("server_error", f"{type(exc).__name__}: {exc}")


def _read(
    completion: object, requested_model: str, forced: bool, config: OpenAIConfig, latency_ms: int
) -> ModelReply:
    """The reply a chat completion holds; "refused" for a refusal, "malformed" for anything unreadable (with
    what it was billed, when its usage says)."""
    # Without strict validation the SDK hands back whatever the body held: check everything.
    if not isinstance(completion, ChatCompletion) or not isinstance(completion.choices, list):
        _malformed(f"Expected a chat completion, got {type(completion).__name__}: {completion!r}")
    model = completion.model if isinstance(completion.model, str) and completion.model else requested_model
    input_tokens = getattr(completion.usage, "prompt_tokens", None)
    output_tokens = getattr(completion.usage, "completion_tokens", None)
    if not (_is_count(input_tokens) and _is_count(output_tokens)):
        _malformed(f"usage lacks token counts: {completion.usage!r}")
    billed = Usage(input_tokens, output_tokens, cost_usd(model, input_tokens, output_tokens, config.prices))
    try:
        text, stop_reason, tool_input = _content(completion, forced)
    except ModelError as err:
        err.usage = billed  # the reply was billed even though it cannot be used
        raise
    return ModelReply.of(
        billed, text=text, tool_input=tool_input, model=model, latency_ms=latency_ms, stop_reason=stop_reason
    )


def _content(completion: ChatCompletion, forced: bool) -> tuple[str, str | None, dict[str, Any] | None]:
    """The first choice's text, its stop reason as Claude's are named, and, when a tool was `forced`, its JSON."""
    if not completion.choices:
        _malformed("The completion has no choices.")
    choice = completion.choices[0]
    message = choice.message
    finish = choice.finish_reason if isinstance(choice.finish_reason, str) else None
    refusal = getattr(message, "refusal", None)
    if finish == "content_filter" or refusal:
        raise ModelError("refused", f"finish_reason={finish!r}, refusal={refusal!r}", 200)
    text = message.content if isinstance(message.content, str) else ""
    stop_reason = STOP_REASONS.get(finish or "", finish)
    if not forced:
        return text, stop_reason, None
    if stop_reason == "max_tokens":
        _malformed("The JSON reply was cut off at max_tokens, so it is incomplete.")
    try:
        tool_input = json.loads(text)
    except ValueError:
        _malformed(f"The reply is not the JSON asked for: {text[:300]!r}")
    if not isinstance(tool_input, dict):
        _malformed(f"The reply's JSON is not an object: {text[:300]!r}")
    return text, stop_reason, tool_input


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _malformed(detail: str) -> NoReturn:
    raise ModelError("malformed", detail, 200)
