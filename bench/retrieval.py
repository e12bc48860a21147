"""Retrieval on the corpus at 1k/10k/100k passages (HNSW, the exact scans, hybrid retrieval), and the refusal
decision.

Timings on shared machines are noisy, so each figure is a median over repeated runs, and HNSW retrieval is
compared with an exact NumPy scan of the same vectors measured in the same run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db import connection, transaction

from bench.filling import (
    corpus_figures,
    corpus_for,
    corpus_queries,
    current_matrix,
    exact_top,
    fill_to,
)
from bench.hnsw import index_bytes
from bench.timing import median_of_runs, percentiles, timed
from garden.answering.retrieval import Thresholds, gather, retrieve, select, vector_candidates
from garden.golden import GoldenEntry
from garden.readers import ANONYMOUS, Reader
from providers import embeddings

SIZES = (1_000, 10_000, 100_000)


def hybrid_retrieve(
    question: str, vector: npt.NDArray[np.float32], thresholds: Thresholds, reader: Reader = ANONYMOUS
) -> bool:
    """Hybrid retrieval and the gate for a question whose vector is given, in `reader`'s garden: whether it
    was refused."""
    return select(gather(question, vector, reader=reader), thresholds, max_articles=5, max_sources=8).empty


def _sql_exact_scan(vector: npt.NDArray[np.float32]) -> float:
    """Milliseconds for the vector search's own query with the index switched off: what PostgreSQL takes
    to find the exact nearest passages, the scan HNSW replaces (the NumPy scan skips the round trip)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        return timed(vector_candidates, vector)[0]


def bench_retrieval(
    questions: Sequence[GoldenEntry], runs: int, sizes: Sequence[int] = SIZES
) -> dict[str, Any]:
    """At each size, the garden filled with the corpus's real passages: HNSW (through SQL), the same query with
    the index off (PostgreSQL's exact scan), the in-process NumPy scan and hybrid retrieval, interleaved
    question by question, and HNSW's recall@10 against the exact scan. Queries: the golden set's questions and
    held-out passages' first sentences."""
    load_seconds, corpus = timed(corpus_for, max(sizes))
    queries = corpus_queries(questions, corpus)
    vectors = embeddings.embed(queries)
    thresholds = Thresholds.from_settings()
    results = []
    for size in sorted(sizes):
        fill_ms, index_seconds = timed(fill_to, size, corpus)
        ids, matrix = current_matrix()
        hnsw_runs, numpy_runs, sql_runs, hybrid_runs, recalls = [], [], [], [], []
        for _ in range(runs):
            hnsw, exact, sql, hybrid = [], [], [], []
            for question, vector in zip(queries, vectors, strict=True):
                elapsed, found = timed(vector_candidates, vector)
                hnsw.append(elapsed)
                elapsed, top = timed(exact_top, matrix, vector)
                exact.append(elapsed)
                sql.append(_sql_exact_scan(vector))
                elapsed, _ = timed(hybrid_retrieve, question, vector, thresholds)
                hybrid.append(elapsed)
                exact_best = set(ids[top[:10]].tolist())
                recalls.append(len({passage_id for passage_id, *_ in found[:10]} & exact_best) / 10)
            hnsw_runs.append(percentiles(hnsw))
            numpy_runs.append(percentiles(exact))
            sql_runs.append(percentiles(sql))
            hybrid_runs.append(percentiles(hybrid))
        vector_search, numpy_scan = median_of_runs(hnsw_runs), median_of_runs(numpy_runs)
        sql_scan = median_of_runs(sql_runs)
        results.append(
            {
                "passages": len(matrix),
                "fill_seconds": round(fill_ms / 1000, 1),
                "index_build_seconds": round(index_seconds, 1),
                "index_mib": round(index_bytes() / 2**20, 1),
                "hnsw_vector_search": vector_search,
                "numpy_exact_scan": numpy_scan,
                "p95_ratio_hnsw_to_numpy": round(
                    vector_search["p95_ms"] / max(numpy_scan["p95_ms"], 1e-6), 2
                ),
                "sql_exact_scan": sql_scan,
                "p95_ratio_hnsw_to_sql_exact_scan": round(
                    vector_search["p95_ms"] / max(sql_scan["p95_ms"], 1e-6), 2
                ),
                "hnsw_recall_at_10": round(float(np.mean(recalls)), 3),
                "hybrid_retrieval": median_of_runs(hybrid_runs),
            }
        )
    return {
        "corpus": corpus_figures(corpus, load_seconds / 1000),
        "queries": {"golden": len(questions), "held_out_first_sentences": len(queries) - len(questions)},
        "sizes": results,
    }


def bench_refusal(questions: Sequence[GoldenEntry], runs: int) -> dict[str, float]:
    """The whole refusal decision for out-of-scope questions: embedding, retrieval and the gate."""
    return percentiles([timed(retrieve, q.question)[0] for _ in range(runs) for q in questions])
