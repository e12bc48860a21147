"""A served re-ranker: passages re-scored against a question by a cross-encoder the team runs itself.

One `POST` in Cohere's shape, which Infinity, vLLM (`/rerank`, `/v1/rerank`), LiteLLM's proxy and Cohere's own API
read: `{"model", "query", "documents": [...], "top_n"}`, answered `{"results": [{"index", "relevance_score"},
...]}`. `rerank` returns the documents' order, most relevant first, or raises `RerankError` with a message fit for
a log: the caller keeps its own order then. One attempt, no retries: re-ranking sits on every question's path, and
a question answered in the hybrid order is better than one kept waiting. Plain Python: only `rerank_config()`
reads Django settings, when called. The API key never appears in an error or a log.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx2

logger = logging.getLogger(__name__)

UNREADABLE = "its reply is not Cohere's rerank shape ({detail})"


@dataclass(frozen=True)
class RerankConfig:
    """Where the re-ranker is (`url`: the endpoint itself, path included), its model and the top `candidates`
    sent; the API key is left out of `repr()`."""

    url: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout_seconds: float = 5.0
    candidates: int = 20

    def __post_init__(self) -> None:
        if self.timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        if self.candidates < 2:
            raise ValueError("candidates must be at least 2: one passage has no order to change")


class RerankError(Exception):
    """The re-ranker gave no usable order; the message says why (never with the key)."""


def rerank_config() -> RerankConfig | None:
    """The re-ranker the settings name (`RERANK_URL`, `RERANK_MODEL`, `RERANK_API_KEY`, `RERANK_CANDIDATES`,
    `RERANK_TIMEOUT_SECONDS`); None when `RERANK_URL` is empty, as it is by default."""
    # Imported here, not above, so that the client stays plain Python.
    from django.conf import settings

    if not settings.RERANK_URL:
        return None
    return RerankConfig(
        url=settings.RERANK_URL,
        model=settings.RERANK_MODEL,
        api_key=settings.RERANK_API_KEY,
        timeout_seconds=settings.RERANK_TIMEOUT_SECONDS,
        candidates=settings.RERANK_CANDIDATES,
    )


def rerank(config: RerankConfig, query: str, documents: Sequence[str]) -> list[int]:
    """The indices of `documents`, most relevant to `query` first, as the re-ranker scores them; documents the
    reply leaves out (a server that returns fewer than `top_n`) follow in their own order. Raises `RerankError`."""
    if not documents:
        return []
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    body = {"model": config.model, "query": query, "documents": list(documents), "top_n": len(documents)}
    try:
        response = httpx2.post(config.url, json=body, headers=headers, timeout=config.timeout_seconds)
    except httpx2.TimeoutException:
        raise RerankError(f"no reply within {config.timeout_seconds:g} s") from None
    except httpx2.HTTPError as exc:
        raise RerankError(f"could not reach it: {type(exc).__name__}: {exc}") from None
    if response.status_code != 200:
        raise RerankError(f"HTTP {response.status_code}: {response.text[:200]!r}")
    try:
        reply = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise RerankError(UNREADABLE.format(detail=f"not JSON: {response.text[:200]!r}")) from None
    return order_of(reply, len(documents))


def order_of(reply: object, count: int) -> list[int]:
    """The order a rerank reply gives `count` documents (see `rerank`); `RerankError` for anything else: a
    missing field, an index out of range or given twice, a score that is not a number."""
    results = reply.get("results") if isinstance(reply, dict) else None
    if not isinstance(results, list):
        raise RerankError(UNREADABLE.format(detail=f"no results list: {str(reply)[:200]!r}"))
    scored: dict[int, float] = {}
    for result in results:
        index = result.get("index") if isinstance(result, dict) else None
        score = result.get("relevance_score") if isinstance(result, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count or index in scored:
            raise RerankError(UNREADABLE.format(detail=f"index {index!r} of {count} documents"))
        if not isinstance(score, int | float) or isinstance(score, bool) or not math.isfinite(score):
            raise RerankError(UNREADABLE.format(detail=f"relevance_score {score!r}"))
        scored[index] = float(score)
    ranked = sorted(scored, key=lambda index: -scored[index])  # stable: ties keep the reply's order
    return ranked + [index for index in range(count) if index not in scored]
