"""A local HTTP server that speaks enough of the Anthropic Messages API for the real SDK to talk to it.

Tests script what the server does next (a FIFO of behaviours, with a default once the script runs out)
and read back every request it received. A request with `"stream": true` is answered as the real API streams:
Server-Sent Events (`message_start`, `content_block_start`, `ping`, `content_block_delta`s, `content_block_stop`,
`message_delta`, `message_stop`) in a chunked body, one text piece a word; `streamed(...)` scripts how (a delay
per word, an `error` event or a dropped connection after some words). The server is the one every fake shares
(`tests.fakes.http_server.FakeHTTPServer`). Load the `fake_messages_api` fixture from a conftest with
`pytest_plugins = ["tests.fakes.messages_api"]`.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

import pytest

from tests.fakes.http_server import (
    ERROR_TYPES,
    Behaviour,
    FakeHTTPServer,
    RecordedRequest,
    Responder,
    Scripted,
    StreamPlan,
    _Handler,
    malformed,
    serving,
)

__all__ = [
    "ERROR_TYPES",
    "Behaviour",
    "FakeMessagesAPI",
    "RecordedRequest",
    "Responder",
    "Scripted",
    "StreamPlan",
    "delay",
    "malformed",
    "refusal",
    "reply_text",
    "reply_tool",
    "sse_event",
    "status",
    "stream_words",
    "streamed",
]

MESSAGES_PATH = "/v1/messages"

# API version 2026-10-21 (what anthropic 2.x sends) rejects sampling parameters, even at their defaults.
REJECTED_SAMPLING_FIELDS = ("temperature", "top_p", "top_k")


def _message(
    content: list[dict[str, Any]],
    *,
    stop_reason: str | None,
    input_tokens: int,
    output_tokens: int,
    model: str | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }
    if model is not None:
        payload["model"] = model
    payload.update(extra or {})
    return payload


def reply_text(
    text: str,
    *,
    input_tokens: int = 12,
    output_tokens: int = 8,
    stop_reason: str = "end_turn",
    model: str | None = None,
) -> Behaviour:
    """A 200 reply with one text block; `model` defaults to the model the request asked for."""
    content = [{"type": "text", "text": text, "citations": None}]
    return Behaviour(
        payload=_message(
            content,
            stop_reason=stop_reason,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model=model,
        )
    )


def reply_tool(
    name: str,
    input_dict: Mapping[str, Any],
    *,
    text: str | None = None,
    input_tokens: int = 12,
    output_tokens: int = 8,
    stop_reason: str = "tool_use",
    model: str | None = None,
) -> Behaviour:
    """A 200 reply with a `tool_use` block, optionally preceded by a text block."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text, "citations": None})
    content.append({"type": "tool_use", "id": "toolu_fake", "name": name, "input": dict(input_dict)})
    return Behaviour(
        payload=_message(
            content,
            stop_reason=stop_reason,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model=model,
        )
    )


def refusal(
    *,
    text: str = "",
    category: str | None = None,
    explanation: str | None = "The model declined to respond.",
    input_tokens: int = 12,
    output_tokens: int = 1,
) -> Behaviour:
    """A 200 reply with `stop_reason` "refusal" and the refusal's `stop_details`."""
    content = [{"type": "text", "text": text, "citations": None}] if text else []
    stop_details = {"type": "refusal", "category": category, "explanation": explanation}
    return Behaviour(
        payload=_message(
            content,
            stop_reason="refusal",
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model=None,
            extra={"stop_details": stop_details},
        )
    )


def streamed(
    text: str,
    *,
    input_tokens: int = 12,
    output_tokens: int | None = None,
    stop_reason: str = "end_turn",
    first_word_seconds: float = 0.0,
    word_seconds: float = 0.0,
    break_after: int | None = None,
    break_with: str = "error",
    error_type: str = "overloaded_error",
) -> Behaviour:
    """A reply to a streaming request: `text` a word an event, the first after `first_word_seconds` and each
    next after `word_seconds`; `output_tokens` defaults to the number of words. With `break_after`, the stream
    breaks after that many words: an `error` event (`break_with="error"`, as the API sends when overloaded) or
    the connection cut (`break_with="drop"`), with no `message_delta` or `message_stop`."""
    words = stream_words(text)
    reply = reply_text(
        text,
        input_tokens=input_tokens,
        output_tokens=len(words) if output_tokens is None else output_tokens,
        stop_reason=stop_reason,
    )
    plan = StreamPlan(word_seconds, break_after, break_with, error_type)
    return replace(reply, delay_seconds=first_word_seconds, stream=plan)


def stream_words(text: str) -> list[str]:
    """The pieces the fake streams `text` in: each word with the space after it."""
    return re.findall(r"\s*\S+\s*|\s+", text)


def sse_event(name: str, data: Mapping[str, Any]) -> bytes:
    """One Server-Sent Event as the Messages API frames it."""
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def status(
    code: int,
    body: Mapping[str, Any] | bytes | None = None,
    headers: Mapping[str, str] | None = None,
) -> Behaviour:
    """An error reply; without `body`, the real API's error shape for that status."""
    if body is None:
        error_type = ERROR_TYPES.get(code, "api_error" if code >= 500 else "invalid_request_error")
        body = {"type": "error", "error": {"type": error_type, "message": f"Fake {code} ({error_type})."}}
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Behaviour(status=code, raw=raw, headers=dict(headers or {}))


def delay(seconds: float, then: Behaviour | None = None) -> Behaviour:
    """Wait `seconds` before sending `then` (a short text reply by default)."""
    return replace(then if then is not None else reply_text("Sorry for the wait."), delay_seconds=seconds)


class FakeMessagesAPI(FakeHTTPServer):
    """A scripted stand-in for `POST /v1/messages` on 127.0.0.1 with an ephemeral port.

    Before a scripted behaviour is used the request is checked like the real API would (path, an
    `x-api-key` or bearer credential, `anthropic-version`, a JSON body with `model`, `max_tokens`
    and `messages`, no sampling parameters); a request that fails those checks gets the real
    error reply and does not use up the script. Pass `validate=False` to skip the checks.
    """

    PATHS = (MESSAGES_PATH,)
    REQUIRED = ("model", "max_tokens", "messages")

    def __init__(self, *, default: Scripted | None = None, validate: bool = True) -> None:
        super().__init__(
            default=default if default is not None else reply_text("Hello from the fake API."),
            validate=validate,
        )

    def reply_text(self, text: str, **kwargs: Any) -> FakeMessagesAPI:
        return self.enqueue(reply_text(text, **kwargs))

    def reply_tool(self, name: str, input_dict: Mapping[str, Any], **kwargs: Any) -> FakeMessagesAPI:
        return self.enqueue(reply_tool(name, input_dict, **kwargs))

    def status(
        self,
        code: int,
        body: Mapping[str, Any] | bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> FakeMessagesAPI:
        return self.enqueue(status(code, body, headers))

    def delay(self, seconds: float, then: Behaviour | None = None) -> FakeMessagesAPI:
        return self.enqueue(delay(seconds, then))

    def refusal(self, **kwargs: Any) -> FakeMessagesAPI:
        return self.enqueue(refusal(**kwargs))

    def streamed(self, text: str, **kwargs: Any) -> FakeMessagesAPI:
        return self.enqueue(streamed(text, **kwargs))

    @staticmethod
    def _refusal(headers: Mapping[str, str]) -> tuple[int, str] | None:
        has_bearer = headers.get("authorization", "").startswith("Bearer ")
        if not headers.get("x-api-key") and not has_bearer:
            return 401, "x-api-key header is required"
        if not headers.get("anthropic-version"):
            return 400, "anthropic-version: header is required"
        return None

    @staticmethod
    def _refused_body(body: dict[str, Any]) -> tuple[int, str] | None:
        for name in REJECTED_SAMPLING_FIELDS:
            if name in body:
                return 400, f"{name}: Extra inputs are not permitted"
        return None

    def _stream(self, handler: _Handler, behaviour: Behaviour, body: dict[str, Any], number: int) -> None:
        """The payload's reply as the API streams it, in a chunked body; broken as `behaviour.stream` says."""
        payload = dict(behaviour.payload or {})
        plan = behaviour.stream or StreamPlan()
        usage = payload.get("usage", {})
        text = "".join(
            block.get("text", "") for block in payload.get("content", []) if block.get("type") == "text"
        )
        message = {
            "id": f"msg_fake_{number:06d}",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": payload.get("model") or body.get("model", "claude-fake"),
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": usage.get("input_tokens", 0), "output_tokens": 1},
        }

        def chunk(data: bytes) -> None:
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            handler.wfile.flush()

        try:
            handler.send_response(200, "OK")
            handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
            handler.send_header("Cache-Control", "no-cache")
            handler.send_header("Transfer-Encoding", "chunked")
            handler.send_header("request-id", f"req_fake_{number:06d}")
            handler.end_headers()
            chunk(sse_event("message_start", {"type": "message_start", "message": message}))
            chunk(
                sse_event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            chunk(sse_event("ping", {"type": "ping"}))
            for sent, word in enumerate(stream_words(text)):
                if plan.break_after is not None and sent >= plan.break_after:
                    self._break(handler, plan, chunk)
                    return
                if sent and plan.word_seconds and self._closing.wait(plan.word_seconds):
                    return
                delta = {"type": "text_delta", "text": word}
                chunk(
                    sse_event(
                        "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
                    )
                )
            if plan.break_after is not None:
                self._break(handler, plan, chunk)
                return
            chunk(sse_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
            chunk(
                sse_event(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": payload.get("stop_reason"), "stop_sequence": None},
                        "usage": {"output_tokens": usage.get("output_tokens", 0)},
                    },
                )
            )
            chunk(sse_event("message_stop", {"type": "message_stop"}))
            chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True

    @staticmethod
    def _break(handler: _Handler, plan: StreamPlan, chunk: Callable[[bytes], None]) -> None:
        handler.close_connection = True
        if plan.break_with == "drop":
            # Cut mid-body: the chunked body never ends, as when a connection is lost.
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
            return
        error = {"type": plan.error_type, "message": f"Fake {plan.error_type} mid-stream."}
        chunk(sse_event("error", {"type": "error", "error": error}))
        chunk(b"")


@pytest.fixture
def fake_messages_api() -> Iterator[FakeMessagesAPI]:
    """A started fake Messages API, closed after the test."""
    yield from serving(FakeMessagesAPI())
