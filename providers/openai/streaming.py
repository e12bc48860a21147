"""`OpenAIStream`: one streamed chat completion, its text as the model writes it and what it was billed so far.

The chat API streams Server-Sent Events, each a `chat.completion.chunk`: the text in `choices[0].delta.content`,
the stop in `choices[0].finish_reason`, and, asked for with `stream_options.include_usage`, a last chunk with
the usage, then `data: [DONE]`. A stream can break after some text: an `error` object in place of a chunk, the
connection lost, a body that ends without a finish reason. Each break is a `ModelError` (as `ClaudeStream`'s)
whose `usage` is what the call was billed as far as the stream told; the usage comes only at the end, so until
then it is bounded from above: a token a byte of the request and of the text received (a token covers at least
one byte), never less than was billed.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx2
import openai

from modelcalls import Usage
from providers.claude.pricing import cost_usd
from providers.claude.streaming import ModelStream
from providers.errors import ModelError
from providers.openai.client import FAILURES, STOP_REASONS, chat_request, client_for, to_error
from providers.openai.config import OpenAIConfig

logger = logging.getLogger(__name__)


class OpenAIStream(ModelStream):
    """A streamed call, read as `providers.claude.ClaudeStream` is: iterate `text()`; `reply()` once it is whole;
    `close()` to stop reading."""

    _name = "Served model"

    def __init__(
        self,
        config: OpenAIConfig,
        *,
        model: str,
        system: str,
        messages: list[dict[str, Any]],
        max_tokens: int,
    ) -> None:
        super().__init__(config, model, max_tokens)
        self._config: OpenAIConfig = config
        self._request = chat_request(model=model, system=system, messages=messages, max_tokens=max_tokens)
        self._request.update(stream=True, stream_options={"include_usage": True})
        self._billed: tuple[int, int] | None = None

    @property
    def usage(self) -> Usage:
        """What the call was billed as far as the stream told (see the module's docstring)."""
        if self._billed is not None:
            input_tokens, output_tokens = self._billed
        else:
            input_tokens = len(json.dumps(self._request["messages"]).encode())
            output_tokens = min(self.max_tokens, self._received_bytes)
        return Usage(
            input_tokens,
            output_tokens,
            cost_usd(self.model, input_tokens, output_tokens, self._config.prices),
        )

    _failures = (*FAILURES, httpx2.HTTPError)
    _unended = "The stream ended before its finish_reason."

    def _begin(self) -> Any:
        return client_for(self._config).chat.completions.create(**self._request)

    def _ended(self) -> bool:
        return self.stop_reason is not None

    def _read(self, chunk: Any) -> str:
        """The text a chunk adds (""), keeping what it says of the model, usage and stop reason."""
        if isinstance(getattr(chunk, "model", None), str) and chunk.model:
            self.model = chunk.model
        usage = getattr(chunk, "usage", None)
        if (
            usage is not None
            and isinstance(usage.prompt_tokens, int)
            and isinstance(usage.completion_tokens, int)
        ):
            self._billed = (usage.prompt_tokens, usage.completion_tokens)
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return ""
        finish = choices[0].finish_reason
        if isinstance(finish, str):
            self.stop_reason = STOP_REASONS.get(finish, finish)
        content = getattr(choices[0].delta, "content", None)
        return content if isinstance(content, str) else ""

    def _stream_error(self, exc: BaseException) -> ModelError:
        began = self._received_bytes > 0
        if isinstance(exc, httpx2.HTTPError) or (began and isinstance(exc, openai.APIConnectionError)):
            cause = exc.__cause__ or exc
            return ModelError("connection", f"The stream broke: {type(cause).__name__}: {cause}", 200)
        error = to_error(exc, self._config)
        if error.kind == "server_error" and began:
            error.detail = f"An error mid-stream: {error.detail}"
        return error
