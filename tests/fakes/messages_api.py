"""A local HTTP server that speaks enough of the Anthropic Messages API for the real SDK to talk to it.

Tests script what the server does next (a FIFO of behaviours, with a default once the script runs out)
and read back every request it received. A request with `"stream": true` is answered as the real API streams:
Server-Sent Events (`message_start`, `content_block_start`, `ping`, `content_block_delta`s, `content_block_stop`,
`message_delta`, `message_stop`) in a chunked body, one text piece a word; `streamed(...)` scripts how (a delay
per word, an `error` event or a dropped connection after some words). Load the `fake_messages_api` fixture from a conftest with
`pytest_plugins = ["tests.fakes.messages_api"]`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, TypedDict

import pytest

MESSAGES_PATH = "/v1/messages"

# The error `type` the real API puts in its error body for each status.
ERROR_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

# API version 2026-10-21 (what anthropic 2.x sends) rejects sampling parameters, even at their defaults.
REJECTED_SAMPLING_FIELDS = ("temperature", "top_p", "top_k")


class RecordedRequest(TypedDict):
    """One request as the server received it; header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw_body: bytes
    received_at: float  # time.monotonic() on arrival


@dataclass(frozen=True)
class Behaviour:
    """What the server sends for one request.

    `payload` is a message body to complete with the request's model and a fresh id (`None` for
    error and raw replies); `raw` is sent as-is. `delay_seconds` is waited before anything is sent.
    `stream`: how a streaming request is answered (a request with `"stream": true` and no plan here gets its
    payload's text at once, a word an event).
    """

    status: int = 200
    payload: Mapping[str, Any] | None = None
    raw: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    delay_seconds: float = 0.0
    stream: StreamPlan | None = None


@dataclass(frozen=True)
class StreamPlan:
    """How a streamed reply goes: `word_seconds` waited before each word after the first; after
    `break_after` words (None: never) an `error` event of `error_type` (`break_with` "error") or the connection
    cut mid-body (`break_with` "drop")."""

    word_seconds: float = 0.0
    break_after: int | None = None
    break_with: str = "error"
    error_type: str = "overloaded_error"


Responder = Callable[[dict[str, Any]], Behaviour]
Scripted = Behaviour | Responder


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


def malformed(raw_bytes: bytes, *, content_type: str = "application/json") -> Behaviour:
    """A 200 reply whose body is exactly `raw_bytes`."""
    return Behaviour(raw=raw_bytes, content_type=content_type)


def _error_body(code: int, message: str) -> bytes:
    error_type = ERROR_TYPES.get(code, "api_error")
    return json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    api: FakeMessagesAPI


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per reply: headers and body in separate small packets stall on delayed ACKs (~40 ms).
    wbufsize = -1
    disable_nagle_algorithm = True
    server: _Server

    def do_POST(self) -> None:
        self.server.api._handle(self)

    def do_GET(self) -> None:
        self.server.api._handle(self)

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests read `requests` instead."""

    def setup(self) -> None:
        super().setup()
        self.server.api._track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.api._untrack(self.connection)


class FakeMessagesAPI:
    """A scripted stand-in for `POST /v1/messages` on 127.0.0.1 with an ephemeral port.

    Before a scripted behaviour is used the request is checked like the real API would (path, an
    `x-api-key` or bearer credential, `anthropic-version`, a JSON body with `model`, `max_tokens`
    and `messages`, no sampling parameters); a request that fails those checks gets the real
    error reply and does not use up the script. Pass `validate=False` to skip the checks.
    """

    def __init__(self, *, default: Scripted | None = None, validate: bool = True) -> None:
        self._lock = threading.Lock()
        self._script: deque[Scripted] = deque()
        self._default: Scripted = default if default is not None else reply_text("Hello from the fake API.")
        self._requests: list[RecordedRequest] = []
        self._ids = itertools.count(1)
        self._validate = validate
        self._closing = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.api = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """The URL to give the SDK as `base_url` (it appends `/v1/messages`)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            if not self._requests:
                raise AssertionError("The fake Messages API has not received any request.")
            return self._requests[-1]

    @property
    def pending(self) -> int:
        """How many scripted behaviours have not been used yet."""
        with self._lock:
            return len(self._script)

    def enqueue(self, *behaviours: Scripted) -> FakeMessagesAPI:
        """Append behaviours to the script, used one per request in order."""
        with self._lock:
            self._script.extend(behaviours)
        return self

    def set_default(self, behaviour: Scripted) -> FakeMessagesAPI:
        """What to do once the script is empty."""
        with self._lock:
            self._default = behaviour
        return self

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

    def malformed(self, raw_bytes: bytes, *, content_type: str = "application/json") -> FakeMessagesAPI:
        return self.enqueue(malformed(raw_bytes, content_type=content_type))

    def refusal(self, **kwargs: Any) -> FakeMessagesAPI:
        return self.enqueue(refusal(**kwargs))

    def streamed(self, text: str, **kwargs: Any) -> FakeMessagesAPI:
        return self.enqueue(streamed(text, **kwargs))

    def respond(self, fn: Responder) -> FakeMessagesAPI:
        """Enqueue a callable that builds the behaviour from the parsed request body."""
        return self.enqueue(fn)

    def close(self) -> None:
        """Stop serving, cut open connections and wake any delayed reply."""
        self._closing.set()
        self._server.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeMessagesAPI:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _track(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.add(conn)

    def _untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.discard(conn)

    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw_body = handler.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in handler.headers.items()}
        try:
            body: Any = json.loads(raw_body) if raw_body else None
        except ValueError:
            body = None
        with self._lock:
            self._requests.append(
                RecordedRequest(
                    method=handler.command,
                    path=handler.path,
                    headers=headers,
                    body=body,
                    raw_body=raw_body,
                    received_at=time.monotonic(),
                )
            )
        rejection = self._check(handler.command, handler.path, headers, body) if self._validate else None
        if rejection is not None:
            code, message = rejection
            self._send(handler, code, _error_body(code, message), "application/json", {})
            return
        behaviour = self._next_behaviour(body if isinstance(body, dict) else {})
        if behaviour.delay_seconds and self._closing.wait(behaviour.delay_seconds):
            return
        number = next(self._ids)
        wants_stream = isinstance(body, dict) and body.get("stream") is True
        if wants_stream and behaviour.status == 200 and behaviour.payload is not None:
            self._stream(handler, behaviour, body, number)
            return
        if behaviour.raw is not None:
            payload_bytes = behaviour.raw
        else:
            payload = dict(behaviour.payload or {})
            payload["id"] = f"msg_fake_{number:06d}"
            if "model" not in payload:
                payload["model"] = (
                    body.get("model", "claude-fake") if isinstance(body, dict) else "claude-fake"
                )
            payload_bytes = json.dumps(payload).encode()
        extra_headers = {"request-id": f"req_fake_{number:06d}", **behaviour.headers}
        self._send(handler, behaviour.status, payload_bytes, behaviour.content_type, extra_headers)

    def _next_behaviour(self, body: dict[str, Any]) -> Behaviour:
        with self._lock:
            scripted = self._script.popleft() if self._script else self._default
        if isinstance(scripted, Behaviour):
            return scripted
        try:
            return scripted(body)
        except Exception as exc:
            # Surface a broken responder in the test's failure instead of a dropped connection.
            message = f"The fake's responder raised {type(exc).__name__}: {exc}"
            return status(500, _error_body(500, message), {"x-should-retry": "false"})

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

    @staticmethod
    def _check(method: str, path: str, headers: Mapping[str, str], body: Any) -> tuple[int, str] | None:
        if method != "POST" or path.split("?", 1)[0] != MESSAGES_PATH:
            return 404, f"Not found: {method} {path}"
        has_bearer = headers.get("authorization", "").startswith("Bearer ")
        if not headers.get("x-api-key") and not has_bearer:
            return 401, "x-api-key header is required"
        if not headers.get("anthropic-version"):
            return 400, "anthropic-version: header is required"
        if not isinstance(body, dict):
            return 400, "The request body is not valid JSON."
        for name in ("model", "max_tokens", "messages"):
            if name not in body:
                return 400, f"{name}: Field required"
        for name in REJECTED_SAMPLING_FIELDS:
            if name in body:
                return 400, f"{name}: Extra inputs are not permitted"
        return None

    @staticmethod
    def _send(
        handler: _Handler, code: int, payload: bytes, content_type: str, headers: Mapping[str, str]
    ) -> None:
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "Overloaded" if code == 529 else "Unknown"
        try:
            handler.send_response(code, phrase)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(payload)
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (e.g. its timeout fired during a delay); nothing left to tell it.
            handler.close_connection = True


@pytest.fixture
def fake_messages_api() -> Iterator[FakeMessagesAPI]:
    """A started fake Messages API, closed after the test."""
    with FakeMessagesAPI() as api:
        yield api
