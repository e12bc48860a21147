"""A local HTTP server that speaks enough of the OpenAI embeddings API for the real `openai` SDK to talk to it, as
Ollama, vLLM, llama.cpp's server and text-embeddings-inference serve it: `POST /v1/embeddings` with `model` and
`input` (a string or a list of them), answered by a `list` of `embedding` objects, each with its `index`.

By default each text's vector is a hashed bag of its words (`bag_of_words`) of `dimensions` numbers: texts that
share words are near, others far, the same text always gets the same vector, and nothing is downloaded. Faults are
scripted as the fake Messages API scripts them (`tests.fakes.messages_api`): `status(500)`, `status(429)`,
`malformed(b"...")`, or `wrong_size(n)` for vectors of another size. Load the `fake_embeddings_api` fixture with
`pytest_plugins = ["tests.fakes.embeddings_api"]`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.fakes.chat_completions import status
from tests.fakes.http_server import Behaviour, FakeHTTPServer, serving

EMBEDDINGS_PATH = "/v1/embeddings"
DIMENSIONS = 256  # not MiniLM's 384, so a test sees the column follow the model's; few words share a bucket
_WORD = re.compile(r"\w+")


def bag_of_words(text: str, dimensions: int) -> list[float]:
    """The text's words, lower-cased, each counted into a bucket its hash picks, with a sign its hash picks."""
    vector = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        bucket = int.from_bytes(digest[:4], "big") % dimensions
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    return vector


def _texts(body: Mapping[str, Any]) -> list[str]:
    given = body.get("input")
    return [given] if isinstance(given, str) else [str(text) for text in given or []]


def embeddings_reply(texts: list[str], dimensions: int) -> Behaviour:
    """A 200 `list` of the texts' vectors, in order, with the usage a server reports."""
    tokens = sum(len(_WORD.findall(text)) for text in texts)
    return Behaviour(
        payload={
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": bag_of_words(text, dimensions)}
                for i, text in enumerate(texts)
            ],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
    )


class FakeEmbeddingsAPI(FakeHTTPServer):
    """A scripted stand-in for `POST /v1/embeddings` on 127.0.0.1: vectors of `dimensions` numbers unless the
    script says otherwise. A request without `model` or `input`, or to another path, gets a 400 or 404."""

    PATHS = (EMBEDDINGS_PATH,)
    REQUIRED = ("model", "input")

    def __init__(self, dimensions: int = DIMENSIONS) -> None:
        self.dimensions = dimensions
        super().__init__(default=lambda body: embeddings_reply(_texts(body), self.dimensions))

    @property
    def base_url(self) -> str:
        """The URL to give the SDK as `base_url` (it appends `/embeddings`)."""
        return f"{super().base_url}/v1"

    @property
    def texts_embedded(self) -> int:
        """How many texts the server was asked to embed, in all."""
        return sum(len(_texts(request["body"] or {})) for request in self.requests)

    def wrong_size(self, dimensions: int) -> FakeEmbeddingsAPI:
        """The next request gets vectors of `dimensions` numbers (a model other than the configured one)."""
        self.respond(lambda body: embeddings_reply(_texts(body), dimensions))
        return self

    def error(self, code: int) -> FakeEmbeddingsAPI:
        """The next request gets an error `code` in the OpenAI API's shape (the SDK retries 429 and 5xx)."""
        self.enqueue(status(code))
        return self


@pytest.fixture
def fake_embeddings_api() -> Iterator[FakeEmbeddingsAPI]:
    """A started fake embeddings API, closed after the test."""
    yield from serving(FakeEmbeddingsAPI())
