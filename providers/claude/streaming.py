"""`ClaudeStream`: one streamed Messages API call, its text as Claude writes it and what it was billed so far.

The API streams Server-Sent Events: `message_start` (the model and the input tokens), `content_block_delta`s
(the text), `message_delta` (the stop reason and the output tokens, cumulative) and `message_stop`. A stream
can break after some text: an `error` event (the API overloaded mid-answer), a connection lost, a body that
ends without `message_stop`. Each break is a `ModelError` whose `usage` is what the call was billed as far as
the stream told: the input tokens from `message_start`, and the output tokens from `message_delta`, or, when
none came, at most one token per byte of the text received (a token covers at least one byte, as
`garden.answering.synthesis.claude.most_cost` reasons): never less than was billed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any, Protocol

import anthropic
import httpx2

from modelcalls import NO_USAGE, ModelReply, Usage
from providers.claude.client import _SDK_FAILURES, _client, _redact, _to_claude_error
from providers.claude.config import ClaudeConfig
from providers.claude.pricing import cost_usd
from providers.errors import ModelError, ModelErrorKind

logger = logging.getLogger(__name__)

# The `type` of an `error` event's error, as the API names them, to the kind of failure it is.
_STREAM_ERROR_KINDS: dict[str, ModelErrorKind] = {
    "overloaded_error": "server_error",
    "api_error": "server_error",
    "rate_limit_error": "rate_limited",
    "timeout_error": "timeout",
    "authentication_error": "auth",
    "permission_error": "auth",
    "invalid_request_error": "bad_request",
}


class Reached(Protocol):
    """What a stream reads of the config that reached its model (`ClaudeConfig`, `OpenAIConfig`)."""

    @property
    def api_key(self) -> str: ...

    @property
    def prices(self) -> Mapping[str, tuple[Decimal, Decimal]]: ...


class ModelStream:
    """What every streamed call shares, whichever API streams it: `close()`, `reply()` once whole, and its
    failures logged with what they were billed. A subclass sets `_stream` when the call begins, and gives
    `usage` and `text()`; `_name` says what to call the model in the log."""

    _name = "Claude"

    def __init__(self, config: Reached, model: str, max_tokens: int) -> None:
        self._config = config
        self.model = model
        self.max_tokens = max_tokens
        self.stop_reason: str | None = None
        self._received_bytes = 0
        self._started = time.monotonic()
        self._stream: Any = None

    # The failures a stream's call and its reading raise, and what a body that ended without its last event says.
    _failures: tuple[type[BaseException], ...] = ()
    _unended = "The stream ended before its last event."

    @property
    def usage(self) -> Usage:
        raise NotImplementedError

    def text(self) -> Iterator[str]:
        """The text as the model writes it, a piece at a time; raises `ModelError` on a failure or a break."""
        try:
            self._stream = self._begin()
            for event in self._stream:
                piece = self._read(event)
                if piece:
                    self._received_bytes += len(piece.encode())
                    yield piece
        except self._failures as exc:
            failure = self._stream_error(exc)
        else:
            if self._ended():
                return
            failure = ModelError("connection", self._unended, 200)
        # Raised outside the `except` so it has no __context__: the SDK's exception holds the request.
        raise self._failed(failure)

    def _begin(self) -> Any:
        """Make the call; the stream of events it returns."""
        raise NotImplementedError

    def _read(self, event: Any) -> str:
        """The text an event adds (""), keeping what it says of the model, usage and stop reason."""
        raise NotImplementedError

    def _ended(self) -> bool:
        """Whether the stream told its end (a body may stop without it: a connection lost)."""
        raise NotImplementedError

    def _stream_error(self, exc: BaseException) -> ModelError:
        raise NotImplementedError

    def close(self) -> None:
        """Stop reading the stream (and so stop the model writing for it)."""
        if self._stream is not None:
            self._stream.close()

    def reply(self) -> ModelReply:
        """The whole reply's figures, once `text()` has run to its end (the text is the caller's)."""
        return ModelReply.of(
            self.usage,
            text="",
            model=self.model,
            latency_ms=round((time.monotonic() - self._started) * 1000),
            stop_reason=self.stop_reason,
        )

    def _failed(self, error: ModelError) -> ModelError:
        error.usage = self.usage
        error.detail = _redact(error.detail, self._config.api_key)
        logger.warning(
            "%s stream from %s failed after %d ms (%s): %s",
            self._name,
            self.model,
            round((time.monotonic() - self._started) * 1000),
            error.kind,
            error.detail,
        )
        return error


class ClaudeStream(ModelStream):
    """A streamed call: iterate `text()` for the text as it is written; `reply()` once it is whole.

    `text()` raises `ModelError` when the call fails or the stream breaks, with `usage` as billed so far;
    `close()` stops reading (the reader left), after which `usage` is what was billed up to then.
    """

    def __init__(
        self,
        config: ClaudeConfig,
        *,
        model: str,
        system: str,
        messages: list[dict[str, Any]],
        max_tokens: int,
    ) -> None:
        super().__init__(config, model, max_tokens)
        self._config: ClaudeConfig = config
        self._kwargs: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": messages,
            "stream": True,
        }
        if system:
            self._kwargs["system"] = system
        self._input_tokens: int | None = None
        self._output_tokens: int | None = None
        self._stopped = False

    @property
    def usage(self) -> Usage:
        """What the call was billed as far as the stream told (see the module's docstring)."""
        if self._input_tokens is None:
            return NO_USAGE
        output = self._output_tokens
        if output is None:
            output = min(self.max_tokens, self._received_bytes)
        cost = cost_usd(self.model, self._input_tokens, output, self._config.prices)
        return Usage(self._input_tokens, output, cost)

    _failures = (*_SDK_FAILURES, httpx2.HTTPError)
    _unended = "The stream ended before its message_stop event."

    def _begin(self) -> Any:
        client = _client(
            self._config.api_key,
            self._config.base_url,
            self._config.timeout_seconds,
            self._config.max_retries,
            self._config.max_retry_wait_seconds,
        )
        return client.messages.create(**self._kwargs)

    def _ended(self) -> bool:
        return self._stopped

    def _read(self, event: Any) -> str:
        """The text an event adds (""), keeping what it says of the model, usage and stop reason."""
        kind = getattr(event, "type", None)
        if kind == "message_start":
            message = event.message
            if isinstance(message.model, str) and message.model:
                self.model = message.model
            self._input_tokens = int(getattr(message.usage, "input_tokens", 0) or 0)
        elif kind == "content_block_delta" and getattr(event.delta, "type", None) == "text_delta":
            return str(event.delta.text)
        elif kind == "message_delta":
            self.stop_reason = getattr(event.delta, "stop_reason", None)
            output = getattr(event.usage, "output_tokens", None)
            if isinstance(output, int):
                self._output_tokens = output
        elif kind == "message_stop":
            self._stopped = True
        return ""

    def _stream_error(self, exc: BaseException) -> ModelError:
        if isinstance(exc, anthropic.APIStatusError) and exc.status_code == 200:
            # An `error` event after the stream began: its body names the error's type.
            body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
            error: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else {}
            error_type = str(error.get("type", ""))
            return ModelError(
                _STREAM_ERROR_KINDS.get(error_type, "server_error"),
                f"An error event mid-stream: {error_type} {error.get('message', '')}".strip(),
                200,
            )
        began = self._input_tokens is not None
        if isinstance(exc, httpx2.HTTPError) or (began and isinstance(exc, anthropic.APIConnectionError)):
            cause = exc.__cause__ if isinstance(exc, anthropic.APIConnectionError) and exc.__cause__ else exc
            return ModelError("connection", f"The stream broke: {type(cause).__name__}: {cause}", 200)
        assert isinstance(exc, Exception)
        return _to_claude_error(exc, self._config)
