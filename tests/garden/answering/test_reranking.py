"""A served re-ranker orders the sample garden's sources; the refusal gate, and the answer when it fails, stay as
they were without it."""

from __future__ import annotations

import json
import logging
from io import StringIO

import pytest
from django.core.management import call_command

from garden.answering.asking import REFUSAL_TEXT, question_ask
from garden.answering.reranking import FELL_BACK
from garden.answering.retrieval import Thresholds, gather, retrieve
from garden.models import Answer
from tests.conftest import RERANK_MODEL
from tests.fakes import rerank_api as fake
from tests.fakes.messages_api import Behaviour, delay, malformed

pytestmark = pytest.mark.django_db

IN_SCOPE = "How long is the Harrowden Viaduct and how many arches does it have?"
OUT_OF_SCOPE = "What is the boiling point of ethanol at sea level?"


def sources(answer: Answer) -> list[str]:
    """The answer's numbered sources' texts, [1] first."""
    return [source.passage.text for source in answer.sources.order_by("number")]


def answered_without_reranker(settings: pytest.FixtureRequest) -> Answer:
    url = settings.RERANK_URL  # type: ignore[attr-defined]
    settings.RERANK_URL = ""  # type: ignore[attr-defined]
    answer = question_ask(text=IN_SCOPE)
    settings.RERANK_URL = url  # type: ignore[attr-defined]
    return answer


def test_a_reranker_that_reverses_the_order_makes_another_passage_source_1(reranker, settings):
    before = answered_without_reranker(settings)
    reranker.respond(fake.reversed_order)

    after = question_ask(text=IN_SCOPE)

    sent = reranker.last_request["body"]
    assert reranker.last_request["path"] == "/rerank"
    assert (sent["model"], sent["query"], sent["top_n"]) == (RERANK_MODEL, IN_SCOPE, len(sent["documents"]))
    assert 2 <= len(sent["documents"]) <= settings.RERANK_CANDIDATES
    assert sent["documents"][0] == sources(before)[0]  # the hybrid order's first is its source [1]
    assert sources(after)[0] != sources(before)[0]
    assert sent["documents"].index(sources(after)[0]) > 0  # a passage the hybrid order put lower
    assert not after.refused and not after.error and after.text != before.text  # written from the new order


def test_a_question_the_gate_refuses_is_refused_and_never_sent_to_the_reranker(reranker):
    reranker.set_default(fake.reversed_order)

    answer = question_ask(text=OUT_OF_SCOPE)

    assert answer.refused and answer.text == REFUSAL_TEXT
    assert reranker.request_count == 0


def test_a_reranker_cannot_make_a_passage_a_source_when_the_gate_did_not_count_its_note(reranker, settings):
    settings.RERANK_URL = ""
    candidates = gather(IN_SCOPE)
    thresholds = Thresholds.in_force()
    counted = {hit.article_id for hit in candidates.hits if hit.counts(thresholds)}
    top = candidates.hits[: settings.RERANK_CANDIDATES]
    assert any(hit.article_id not in counted for hit in top)  # passages the reversed order puts first
    settings.RERANK_URL = reranker.url
    reranker.respond(fake.reversed_order)

    result = retrieve(IN_SCOPE)

    assert reranker.request_count == 1 and result.sources
    assert {source.article_id for source in result.sources} <= counted
    assert {article.article_id for article in result.articles} <= counted


def test_without_rerank_url_the_reranker_is_never_called(fake_rerank_api, settings):
    assert settings.RERANK_URL == ""
    fake_rerank_api.set_default(fake.reversed_order)

    answer = question_ask(text=IN_SCOPE)

    assert answer.sources.exists() and not answer.refused
    assert fake_rerank_api.request_count == 0


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        (fake.status(500), "HTTP 500"),
        (fake.status(429, "Too many requests"), "HTTP 429"),
        (malformed(b'{"results": [{"index": 0,'), "not JSON"),
        (Behaviour(payload={"results": [{"index": 99, "relevance_score": 0.9}]}), "index 99 of"),
        (Behaviour(payload={"ranking": [0, 1]}), "no results list"),
        (delay(1.0, fake.ranked([1, 0])), "no reply within 0.5 s"),
    ],
    ids=["500", "429", "malformed-json", "index-out-of-range", "not-cohere-shape", "timeout"],
)
def test_a_failing_reranker_is_logged_and_the_answer_keeps_the_hybrid_order(
    reranker, settings, caplog, behaviour, reason
):
    settings.RERANK_TIMEOUT_SECONDS = 0.5
    before = answered_without_reranker(settings)
    reranker.enqueue(behaviour)

    with caplog.at_level(logging.WARNING, logger="garden.answering.reranking"):
        after = question_ask(text=IN_SCOPE)

    assert reranker.request_count == 1
    assert sources(after) == sources(before) and after.text == before.text and not after.error
    said = FELL_BACK.format(model=RERANK_MODEL, url=reranker.url, reason="")
    logged = [r.getMessage() for r in caplog.records if r.name == "garden.answering.reranking"]
    assert len(logged) == 1 and logged[0].startswith(said.split(": ")[0]) and reason in logged[0]
    assert logged[0].endswith("The passages keep the hybrid order.")


def test_a_reranker_that_is_down_is_logged_and_the_answer_still_comes(reranker, settings, caplog):
    before = answered_without_reranker(settings)
    reranker.close()

    with caplog.at_level(logging.WARNING, logger="garden.answering.reranking"):
        after = question_ask(text=IN_SCOPE)

    assert sources(after) == sources(before) and after.text == before.text and not after.error
    assert any("could not reach it: ConnectError" in r.getMessage() for r in caplog.records)


def test_retrieval_report_prints_recall_at_5_with_and_without_the_reranker(reranker, small_golden):
    reranker.set_default(fake.reversed_order)
    out = StringIO()

    call_command("retrieval_report", "--golden", str(small_golden), stdout=out)

    report = json.loads(out.getvalue())["rerank"]
    assert report["model"] == RERANK_MODEL
    assert report["recall_at_5_without"] == 1.0
    assert 0.0 <= report["recall_at_5"] <= 1.0
    assert (
        report["reranked_questions"] == reranker.request_count == 3
    )  # the in-scope ones: the gate refused the other


def test_retrieval_report_says_nothing_of_a_reranker_when_none_is_configured(fake_rerank_api, small_golden):
    out = StringIO()

    call_command("retrieval_report", "--golden", str(small_golden), stdout=out)

    assert "rerank" not in json.loads(out.getvalue())
    assert fake_rerank_api.request_count == 0
