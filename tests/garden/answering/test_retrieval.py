"""Retrieval and the refusal gate, measured on the golden set with the calibrated thresholds."""

import numpy as np
import pytest
from django.db import connection

from garden.answering.retrieval import Thresholds, retrieve, vector_candidates
from garden.answering.retrieval_report import measure, observe
from garden.golden import golden_load
from garden.models import Passage
from providers.embeddings import embed

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
        "unanswerable",
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


def test_the_vector_search_finds_the_exact_ten_nearest_current_passages(golden):
    rows = list(Passage.objects.filter(is_current=True).values_list("id", "embedding"))
    ids = np.asarray([row[0] for row in rows])
    matrix = np.asarray([row[1] for row in rows], dtype=np.float32)
    questions = [q.question for q in golden if q.in_scope]
    for question, vector in zip(questions, embed(questions), strict=True):
        exact = set(ids[np.argsort(-(matrix @ vector))[:10]].tolist())
        assert {passage_id for passage_id, _ in vector_candidates(vector)[:10]} == exact, question


@pytest.mark.django_db(transaction=True)  # autocommit, as a web request searches
def test_a_search_breadth_holds_for_its_own_query_only():
    vector_candidates(embed(["River Kest"])[0], ef_search=123)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('hnsw.ef_search')")
        assert cursor.fetchone()[0] == "40"  # pgvector's default: the 123 asked for ended with its query


def test_the_migrations_build_the_hnsw_index_the_model_declares():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_indexdef('passage_embedding_hnsw'::regclass)")
        definition = cursor.fetchone()[0]
    index = next(i for i in Passage._meta.indexes if i.name == "passage_embedding_hnsw")
    assert f"m='{index.m}'" in definition.replace(" ", "")
    assert f"ef_construction='{index.ef_construction}'" in definition.replace(" ", "")
    assert "vector_cosine_ops" in definition and "WHERE is_current" in definition
