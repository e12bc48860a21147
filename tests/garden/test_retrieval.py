"""Retrieval and the refusal gate, measured on the golden set with the calibrated thresholds."""

import pytest

from garden.golden import golden_load
from garden.retrieval import Thresholds, retrieve
from garden.retrieval_report import measure, observe

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def golden():
    return golden_load()


def test_golden_set_covers_every_category_with_enough_questions(golden):
    categories = {q.category for q in golden}
    assert len(golden) >= 55
    assert categories == {
        "single_fact",
        "synthesis",
        "numbers_dates",
        "comparison",
        "outdated",
        "out_of_scope",
        "adversarial",
    }
    assert all(q.expected_articles for q in golden if q.in_scope)


def test_the_gate_refuses_out_of_scope_questions_and_lets_in_scope_ones_through(golden):
    figures = measure(observe(golden), Thresholds.from_settings())
    assert figures["out_of_scope_refused"] == 1.0
    assert figures["in_scope_wrongly_refused"] == 0.0
    assert figures["recall_at_5"] >= 0.85


def test_a_vector_neighbour_below_the_threshold_does_not_count():
    result = retrieve("Which football club won the 1998 World Cup final?")
    assert result.empty and not result.sources


def test_an_alias_alone_lets_the_question_through():
    result = retrieve("River Kest")
    assert result.topic_ids and not result.empty
