"""What every fake HTTP API of the tests shares: a server on 127.0.0.1 with an ephemeral port that answers each
request as a script says (a FIFO of behaviours, with a default once the script runs out), records every request,
and refuses one a real server would refuse before the script is used up.

A fake names its paths and the body's required fields (`PATHS`, `REQUIRED`) and adds its own checks in
`_refusal` and `_refused_body`; its fixture yields from `serving`, which closes the server after the test.
`FakeMessagesAPI`, `FakeChatAPI`, `FakeEmbeddingsAPI` and `FakeRerankAPI` are built on `FakeHTTPServer`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self, TypedDict, TypeVar

# The error `type` the Messages API puts in its error body for each status; every fake refuses a request in
# that shape, which the `openai` SDK reads as well.
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


def malformed(raw_bytes: bytes, *, content_type: str = "application/json") -> Behaviour:
    """A 200 reply whose body is exactly `raw_bytes`."""
    return Behaviour(raw=raw_bytes, content_type=content_type)


def _error_body(code: int, message: str) -> bytes:
    error_type = ERROR_TYPES.get(code, "api_error")
    return json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    api: FakeHTTPServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left mid-reply (a stream given up, a timeout the test set) is what clients do, not a
        fault of the fake: say nothing, as a real server's log would not trace it. Anything else is printed."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


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


class FakeHTTPServer:
    """A scripted HTTP API on 127.0.0.1 with an ephemeral port, answering POSTs to its `PATHS`.

    Before a scripted behaviour is used the request is checked as the real server would check it (`_check`);
    one that fails gets an error reply and does not use up the script. Pass `validate=False` to skip the checks.
    """

    PATHS: ClassVar[tuple[str, ...]] = ()
    REQUIRED: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, default: Scripted, validate: bool = True) -> None:
        self._lock = threading.Lock()
        self._script: deque[Scripted] = deque()
        self._default: Scripted = default
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
        """The server's address, `http://127.0.0.1:<port>`."""
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
                raise AssertionError("The fake has not received any request.")
            return self._requests[-1]

    @property
    def pending(self) -> int:
        """How many scripted behaviours have not been used yet."""
        with self._lock:
            return len(self._script)

    def enqueue(self, *behaviours: Scripted) -> Self:
        """Append behaviours to the script, used one per request in order."""
        with self._lock:
            self._script.extend(behaviours)
        return self

    def set_default(self, behaviour: Scripted) -> Self:
        """What to do once the script is empty."""
        with self._lock:
            self._default = behaviour
        return self

    def malformed(self, raw_bytes: bytes, *, content_type: str = "application/json") -> Self:
        return self.enqueue(malformed(raw_bytes, content_type=content_type))

    def respond(self, fn: Responder) -> Self:
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

    def __enter__(self) -> Self:
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
            return Behaviour(status=500, raw=_error_body(500, message), headers={"x-should-retry": "false"})

    @classmethod
    def _check(cls, method: str, path: str, headers: Mapping[str, str], body: Any) -> tuple[int, str] | None:
        """Why a real server would refuse this request (its status and message), or None: another method or
        path is not found; then the fake's own `_refusal`; a body that is not a JSON object or lacks a required
        field is a bad request; then the fake's own `_refused_body`."""
        if method != "POST" or path.split("?", 1)[0] not in cls.PATHS:
            return 404, f"Not found: {method} {path}"
        refused = cls._refusal(headers)
        if refused is not None:
            return refused
        if not isinstance(body, dict):
            return 400, "The request body is not valid JSON."
        for name in cls.REQUIRED:
            if name not in body:
                return 400, f"{name}: Field required"
        return cls._refused_body(body)

    @staticmethod
    def _refusal(headers: Mapping[str, str]) -> tuple[int, str] | None:
        """What the fake refuses in a request's headers (a missing credential); None: nothing."""
        return None

    @staticmethod
    def _refused_body(body: dict[str, Any]) -> tuple[int, str] | None:
        """What the fake refuses in a body that has its required fields; None: nothing."""
        return None

    def _stream(self, handler: _Handler, behaviour: Behaviour, body: dict[str, Any], number: int) -> None:
        """The reply to a request with `"stream": true`, for a fake whose API streams."""
        raise NotImplementedError(f"{type(self).__name__} does not stream.")

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


FakeAPI = TypeVar("FakeAPI", bound=FakeHTTPServer)


def serving(api: FakeAPI) -> Iterator[FakeAPI]:
    """`api`, started, for a fixture to yield from; closed once the test is done."""
    with api:
        yield api
