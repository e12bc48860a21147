"""A local HTTP server that speaks a re-ranker's `/rerank` (and `/v1/rerank`) in Cohere's shape, as Infinity and
vLLM serve it: `{"model", "query", "documents", "top_n"}` in, `{"results": [{"index", "relevance_score"}]}` out,
most relevant first.

It is a `tests.fakes.http_server.FakeHTTPServer` (a FIFO of scripted behaviours, every request recorded), as the
fake Messages API is, with the re-ranker's paths and bodies; by default it keeps the documents' order. Load the
`fake_rerank_api` fixture with `pytest_plugins = ["tests.fakes.rerank_api"]`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from tests.fakes.http_server import Behaviour, FakeHTTPServer, Responder, serving

RERANK_PATHS = ("/rerank", "/v1/rerank")


def ranked(order: Sequence[int]) -> Behaviour:
    """A 200 reply ranking the documents `order` names, first most relevant."""
    results = [
        {"index": index, "relevance_score": round(1 - n / (len(order) + 1), 4)}
        for n, index in enumerate(order)
    ]
    return Behaviour(payload={"results": results, "meta": {"billed_units": {"search_units": 1}}})


def in_order(body: dict[str, Any]) -> Behaviour:
    """The documents as they were sent, scores falling (the top `top_n`)."""
    count = min(len(body["documents"]), body.get("top_n") or len(body["documents"]))
    return ranked(range(count))


def reversed_order(body: dict[str, Any]) -> Behaviour:
    """The documents last first: the order a re-ranker that disagrees with the hybrid search gives."""
    return ranked(range(len(body["documents"]) - 1, -1, -1))


def status(code: int, message: str | None = None) -> Behaviour:
    """An error reply as Infinity and vLLM send one."""
    return Behaviour(status=code, raw=json.dumps({"error": message or f"Fake {code}."}).encode())


class FakeRerankAPI(FakeHTTPServer):
    """A scripted stand-in for `POST /rerank` on 127.0.0.1 (see `FakeHTTPServer` for the script).

    A request is checked as a server would check it (the path, a JSON body with `query` and a list of string
    `documents`); one that fails gets a 400 or 404 and does not use up the script.
    """

    PATHS = RERANK_PATHS

    def __init__(self, *, default: Responder = in_order) -> None:
        super().__init__(default=default)

    @staticmethod
    def _refused_body(body: dict[str, Any]) -> tuple[int, str] | None:
        documents = body.get("documents")
        if not isinstance(body.get("query"), str) or not isinstance(documents, list):
            return 400, "query and documents: Field required"
        if not all(isinstance(document, str) for document in documents):
            return 400, "documents: a list of strings"
        return None

    @property
    def url(self) -> str:
        """The endpoint to give as `RERANK_URL`."""
        return f"{self.base_url}/rerank"


@pytest.fixture
def fake_rerank_api() -> Iterator[FakeRerankAPI]:
    """A started fake re-ranker, closed after the test."""
    yield from serving(FakeRerankAPI())
