"""The served re-ranker's client (`providers.rerank`) against the fake re-ranker, over real HTTP: Cohere's request
shape, the reply read as an order, and every unusable reply a `RerankError` that never shows the key."""

from __future__ import annotations

import pytest

from providers.rerank import RerankConfig, RerankError, rerank
from tests.fakes import rerank_api as fake
from tests.fakes.messages_api import Behaviour

pytest_plugins = ["tests.fakes.rerank_api"]
KEY = "rk-test-not-a-real-key-0123456789"


def config_of(api: fake.FakeRerankAPI, path: str = "/rerank") -> RerankConfig:
    return RerankConfig(
        url=f"{api.base_url}{path}", model="bge-reranker-v2-m3", api_key=KEY, timeout_seconds=2
    )


@pytest.mark.parametrize("path", ["/rerank", "/v1/rerank"])
def test_the_request_is_cohere_s_shape_with_the_key_as_a_bearer_token(
    fake_rerank_api: fake.FakeRerankAPI, path: str
) -> None:
    fake_rerank_api.enqueue(fake.ranked([2, 0, 1]))

    order = rerank(config_of(fake_rerank_api, path), "How long is it?", ["a", "b", "c"])

    assert order == [2, 0, 1]
    request = fake_rerank_api.last_request
    assert request["path"] == path and request["headers"]["authorization"] == f"Bearer {KEY}"
    assert request["body"] == {
        "model": "bge-reranker-v2-m3",
        "query": "How long is it?",
        "documents": ["a", "b", "c"],
        "top_n": 3,
    }


def test_without_a_key_no_authorization_is_sent(fake_rerank_api: fake.FakeRerankAPI) -> None:
    config = RerankConfig(url=fake_rerank_api.url, model="m")

    assert rerank(config, "q", ["a", "b"]) == [0, 1]
    assert "authorization" not in fake_rerank_api.last_request["headers"]


def test_results_are_ordered_by_score_and_those_left_out_follow_in_their_own_order(
    fake_rerank_api: fake.FakeRerankAPI,
) -> None:
    results = [{"index": 1, "relevance_score": 0.2}, {"index": 3, "relevance_score": 0.9}]
    fake_rerank_api.enqueue(Behaviour(payload={"results": results}))

    assert rerank(config_of(fake_rerank_api), "q", ["a", "b", "c", "d"]) == [3, 1, 0, 2]


@pytest.mark.parametrize(
    ("results", "said"),
    [
        ([{"index": 0, "relevance_score": 0.5}, {"index": 0, "relevance_score": 0.4}], "index 0 of 2"),
        ([{"index": -1, "relevance_score": 0.5}], "index -1 of 2"),
        ([{"index": True, "relevance_score": 0.5}], "index True of 2"),
        ([{"index": 1, "relevance_score": "high"}], "relevance_score 'high'"),
        ([{"index": 1, "relevance_score": float("nan")}], "relevance_score nan"),
    ],
)
def test_a_reply_whose_order_cannot_be_trusted_is_an_error(
    fake_rerank_api: fake.FakeRerankAPI, results: list[dict[str, object]], said: str
) -> None:
    fake_rerank_api.enqueue(Behaviour(payload={"results": results}))

    with pytest.raises(RerankError, match=said):
        rerank(config_of(fake_rerank_api), "q", ["a", "b"])


def test_an_error_reply_names_its_status_and_never_the_key(fake_rerank_api: fake.FakeRerankAPI) -> None:
    fake_rerank_api.enqueue(fake.status(401, "Invalid API key"))

    with pytest.raises(RerankError) as caught:
        rerank(config_of(fake_rerank_api), "q", ["a", "b"])

    assert "HTTP 401" in str(caught.value) and KEY not in str(caught.value)
    assert KEY not in repr(config_of(fake_rerank_api))


def test_nothing_to_order_sends_nothing(fake_rerank_api: fake.FakeRerankAPI) -> None:
    assert rerank(config_of(fake_rerank_api), "q", []) == []
    assert fake_rerank_api.request_count == 0
