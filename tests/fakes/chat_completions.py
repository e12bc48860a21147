"""A local HTTP server that speaks enough of the OpenAI chat completions API for the real `openai` SDK to talk to
it, as Ollama, vLLM, llama.cpp's server and LM Studio speak it.

It is a `tests.fakes.http_server.FakeHTTPServer` (a FIFO of scripted behaviours, every request recorded), as the
fake Messages API is, with the chat API's paths, bodies and stream: `POST /v1/chat/completions`, a
`chat.completion` reply, and with `"stream": true` one `chat.completion.chunk` a word, a chunk with the finish
reason, one with the usage when `stream_options.include_usage` asks, then `data: [DONE]`. A stream breaks as
`streamed(...)` scripts: an `error` object in place of a chunk (as vLLM and OpenRouter send one mid-stream) or the
connection cut. Load the `fake_chat_api` fixture with `pytest_plugins = ["tests.fakes.chat_completions"]`.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

import pytest

from tests.fakes.http_server import Behaviour, FakeHTTPServer, StreamPlan, _Handler, serving
from tests.fakes.messages_api import stream_words

CHAT_PATH = "/v1/chat/completions"


def completion(
    text: str,
    *,
    prompt_tokens: int = 12,
    completion_tokens: int = 8,
    finish_reason: str = "stop",
    model: str | None = None,
) -> Behaviour:
    """A 200 `chat.completion` with one choice; `model` defaults to the model the request asked for."""
    payload: dict[str, Any] = {
        "object": "chat.completion",
        "created": int(time.time()),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    if model is not None:
        payload["model"] = model
    return Behaviour(payload=payload)


def streamed(
    text: str,
    *,
    prompt_tokens: int = 12,
    finish_reason: str = "stop",
    break_after: int | None = None,
    break_with: str = "error",
) -> Behaviour:
    """A reply to a streaming request: `text` a word a chunk, the usage counting a token a word; with
    `break_after`, the stream breaks after that many words (an `error` object, or the connection cut: "drop")."""
    words = stream_words(text)
    reply = completion(
        text, prompt_tokens=prompt_tokens, completion_tokens=len(words), finish_reason=finish_reason
    )
    return replace(reply, stream=StreamPlan(0.0, break_after, break_with, "server_error"))


def status(code: int, message: str | None = None, headers: Mapping[str, str] | None = None) -> Behaviour:
    """An error reply in the chat API's shape."""
    error = {
        "message": message or f"Fake {code}.",
        "type": "server_error" if code >= 500 else "invalid_request",
    }
    return Behaviour(status=code, raw=json.dumps({"error": error}).encode(), headers=dict(headers or {}))


def _chunk(number: int, model: str, choices: list[dict[str, Any]], **extra: Any) -> bytes:
    data = {
        "id": f"chatcmpl-fake-{number:06d}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        **extra,
    }
    return f"data: {json.dumps(data)}\n\n".encode()


class FakeChatAPI(FakeHTTPServer):
    """A scripted stand-in for `POST /v1/chat/completions` on 127.0.0.1 (see `FakeHTTPServer` for the script).

    A request is checked as a server would check it (the path, a JSON body with `model` and `messages`); one that
    fails gets a 400 or 404 and does not use up the script.
    """

    PATHS = (CHAT_PATH,)
    REQUIRED = ("model", "messages")

    def __init__(self) -> None:
        super().__init__(default=completion("Hello from the fake chat API."))

    @property
    def base_url(self) -> str:
        """The URL to give the SDK as `base_url` (it appends `/chat/completions`)."""
        return f"{super().base_url}/v1"

    def _stream(self, handler: _Handler, behaviour: Behaviour, body: dict[str, Any], number: int) -> None:
        """The payload's reply as the chat API streams it, broken as `behaviour.stream` says."""
        payload = dict(behaviour.payload or {})
        plan = behaviour.stream or StreamPlan()
        choice = payload["choices"][0]
        model = payload.get("model") or body.get("model", "fake-model")

        def send(data: bytes) -> None:
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            handler.wfile.flush()

        try:
            handler.send_response(200, "OK")
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            send(_chunk(number, model, [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]))
            for sent, word in enumerate(stream_words(choice["message"]["content"])):
                if plan.break_after is not None and sent >= plan.break_after:
                    self._broken(handler, plan, send)
                    return
                send(_chunk(number, model, [{"index": 0, "delta": {"content": word}, "finish_reason": None}]))
            if plan.break_after is not None:
                self._broken(handler, plan, send)
                return
            send(_chunk(number, model, [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]))
            if (body.get("stream_options") or {}).get("include_usage"):
                send(_chunk(number, model, [], usage=payload["usage"]))
            send(b"data: [DONE]\n\n")
            send(b"")
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True

    @staticmethod
    def _broken(handler: _Handler, plan: StreamPlan, send: Callable[[bytes], None]) -> None:
        handler.close_connection = True
        if plan.break_with == "drop":
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
            return
        error = {"message": "Fake overload mid-stream.", "type": plan.error_type}
        send(f"data: {json.dumps({'error': error})}\n\n".encode())
        send(b"")


@pytest.fixture
def fake_chat_api() -> Iterator[FakeChatAPI]:
    """A started fake chat completions API, closed after the test."""
    yield from serving(FakeChatAPI())
