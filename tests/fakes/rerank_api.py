"""A local HTTP server that speaks a re-ranker's `/rerank` (and `/v1/rerank`) in Cohere's shape, as Infinity and
vLLM serve it: `{"model", "query", "documents", "top_n"}` in, `{"results": [{"index", "relevance_score"}]}` out,
most relevant first.

It is the fake Messages API (`tests.fakes.messages_api`: a FIFO of scripted behaviours, every request recorded)
with the re-ranker's paths and bodies; by default it keeps the documents' order. Load the `fake_rerank_api`
fixture with `pytest_plugins = ["tests.fakes.rerank_api"]`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from tests.fakes.messages_api import Behaviour, FakeMessagesAPI, Responder

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


class FakeRerankAPI(FakeMessagesAPI):
    """A scripted stand-in for `POST /rerank` on 127.0.0.1 (see `FakeMessagesAPI` for the script).

    A request is checked as a server would check it (the path, a JSON body with `query` and a list of string
    `documents`); one that fails gets a 400 or 404 and does not use up the script.
    """

    def __init__(self, *, default: Responder = in_order) -> None:
        super().__init__(default=default)

    @property
    def url(self) -> str:
        """The endpoint to give as `RERANK_URL`."""
        return f"{self.base_url}/rerank"

    @staticmethod
    def _check(method: str, path: str, headers: Mapping[str, str], body: Any) -> tuple[int, str] | None:
        if method != "POST" or path.split("?", 1)[0] not in RERANK_PATHS:
            return 404, f"Not found: {method} {path}"
        if not isinstance(body, dict):
            return 400, "The request body is not valid JSON."
        documents = body.get("documents")
        if not isinstance(body.get("query"), str) or not isinstance(documents, list):
            return 400, "query and documents: Field required"
        if not all(isinstance(document, str) for document in documents):
            return 400, "documents: a list of strings"
        return None


@pytest.fixture
def fake_rerank_api() -> Iterator[FakeRerankAPI]:
    """A started fake re-ranker, closed after the test."""
    api = FakeRerankAPI()
    try:
        yield api
    finally:
        api.close()
