"""The HNSW recall/latency curve over ef_search at the largest size, for the configured index or a sweep of
index parameters."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db import connection
from pgvector.django import HnswIndex

from bench.filling import corpus_for, corpus_queries, current_matrix, exact_top, fill_to
from bench.timing import median_of_runs, p95_range, percentiles, timed
from garden.answering.retrieval import vector_candidates
from garden.golden import GoldenEntry
from garden.models import Passage
from garden.sync.indexing import VECTOR_INDEX, vector_index
from providers import embeddings

EF_SEARCHES = (40, 60, 80, 100, 150, 200, 300, 450, 600, 1000)
# (m, ef_construction) pairs `bench --hnsw-sweep` builds and measures on the corpus at 100k passages: the
# configured index first (measured as the retrieval section built it, not built again), then cheaper builds,
# which needed a wider ef_search for the same recall (docs/performance.md).
HNSW_PAIRS = ((12, 800), (16, 200), (12, 400))


def _rebuild_hnsw(index: HnswIndex) -> float:
    """Seconds to drop the passages' HNSW index and build `index` in its place over the current rows."""
    with connection.schema_editor() as editor:
        editor.execute(f"DROP INDEX IF EXISTS {VECTOR_INDEX}")
        editor.execute("SET maintenance_work_mem = '1GB'")
        began = time.perf_counter()
        editor.add_index(Passage, index)
        seconds = time.perf_counter() - began
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE garden_passage")
    return seconds


def _hnsw_curve(vectors: npt.NDArray[np.float32], runs: int, ef_searches: Sequence[int]) -> dict[str, Any]:
    """Recall@10 against the exact scan and p50/p95 per `ef_search`, and the exact scan's, timed together."""
    ids, matrix = current_matrix()
    exact_best = [set(ids[exact_top(matrix, vector)[:10]].tolist()) for vector in vectors]
    for vector in vectors:  # Untimed: brings the new index into the cache.
        vector_candidates(vector, ef_search=max(ef_searches))
    exact_runs: list[dict[str, float]] = []
    hnsw_runs: dict[int, list[dict[str, float]]] = {ef: [] for ef in ef_searches}
    recalls: dict[int, float] = {}
    # One pass per method and run, so no timing pays for the cache another method just filled.
    for _ in range(runs):
        exact_runs.append(percentiles([timed(exact_top, matrix, vector)[0] for vector in vectors]))
        for ef in ef_searches:
            searches = [timed(partial(vector_candidates, ef_search=ef), vector) for vector in vectors]
            hnsw_runs[ef].append(percentiles([elapsed for elapsed, _ in searches]))
            recalls[ef] = float(
                np.mean(
                    [
                        len({passage_id for passage_id, *_ in found[:10]} & best) / 10
                        for (_, found), best in zip(searches, exact_best, strict=True)
                    ]
                )
            )
    return {
        "numpy_exact_scan": {**median_of_runs(exact_runs), "p95_ms_range": p95_range(exact_runs)},
        "ef_search": [
            {
                "ef_search": ef,
                "recall_at_10": round(recalls[ef], 3),
                **median_of_runs(hnsw_runs[ef]),
                "p95_ms_range": p95_range(hnsw_runs[ef]),
            }
            for ef in ef_searches
        ],
    }


def bench_hnsw(
    questions: Sequence[GoldenEntry],
    runs: int,
    size: int,
    pairs: Sequence[tuple[int, int]] | None = None,
    ef_searches: Sequence[int] = EF_SEARCHES,
    restore: bool = True,
) -> dict[str, Any]:
    """At `size` current passages: for each (m, ef_construction) pair (default: the configured index), the index
    build time, its size and the recall@10/latency curve over `ef_search`, beside the exact NumPy scan of the
    same run. An index already built with a pair's parameters is measured as it is (its build time is the
    fill's, reported by the retrieval section when that built it). With `restore`, the configured index is
    built again at the end if another was measured last. The garden is filled with the corpus's real
    passages, queried as in `bench_retrieval`."""
    corpus = corpus_for(size)
    fill_build_seconds = fill_to(size, corpus)
    configured = vector_index()
    vectors = embeddings.embed(corpus_queries(questions, corpus))
    ids, matrix = current_matrix()
    similarities = -np.sort(-(vectors @ matrix.T), axis=1)
    curves = []
    configured_pair = (int(configured.m or 0), int(configured.ef_construction or 0))
    for m, ef_construction in pairs or [configured_pair]:
        index = HnswIndex(
            name=VECTOR_INDEX,
            fields=configured.fields,
            m=m,
            ef_construction=ef_construction,
            opclasses=configured.opclasses,
            condition=configured.condition,
        )
        if _index_pair() == (m, ef_construction):
            build_seconds: float | None = fill_build_seconds or None
        else:
            build_seconds = _rebuild_hnsw(index)
        curve = _hnsw_curve(vectors, runs, ef_searches)
        curves.append(
            {
                "m": m,
                "ef_construction": ef_construction,
                "build_seconds": None if build_seconds is None else round(build_seconds, 1),
                "index_mib": round(index_bytes() / 2**20, 1),
                **curve,
            }
        )
    if restore and _index_pair() != configured_pair:
        _rebuild_hnsw(configured)
    return {
        "passages": len(ids),
        "corpus_passages": len(corpus.passages),
        # How tied the true neighbours are: small gaps make recall@10 measure the order of near-equal rows.
        "median_gap_10th_to_11th_similarity": round(
            float(np.median(similarities[:, 9] - similarities[:, 10])), 4
        ),
        "configured": {
            "m": configured_pair[0],
            "ef_construction": configured_pair[1],
            "ef_search": settings.RETRIEVAL_EF_SEARCH,
        },
        "pgvector": _pgvector_version(),
        "indexes": curves,
    }


def _index_pair() -> tuple[int, int] | None:
    """The (m, ef_construction) the passages' HNSW index in place was built with."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_indexdef(%s::regclass)", [VECTOR_INDEX])
        definition = str(cursor.fetchone()[0])
    found = re.search(r"m='?(\d+)'?, ef_construction='?(\d+)'?", definition)
    return (int(found[1]), int(found[2])) if found else None


def index_bytes() -> int:
    """On-disk size of the passages' HNSW index; what it needs in memory to be searched without disk reads."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_relation_size(%s::regclass)", [VECTOR_INDEX])
        return int(cursor.fetchone()[0])


def _pgvector_version() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    return str(row[0]) if row else ""
