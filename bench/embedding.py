"""Query embedding, and the embedding backends side by side."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.timing import median_of_runs, percentiles, timed
from garden.models import Passage
from garden.services import embedding_input
from providers import embeddings


def bench_query_embedding(questions: Sequence[str], runs: int) -> dict[str, float]:
    embeddings.embed_one("warm up")
    samples = [timed(embeddings.embed_one, q)[0] for _ in range(runs) for q in questions]
    return percentiles(samples)


def _embed_with(backend: embeddings.EmbeddingBackend, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    return embeddings.embed(texts, backend=backend)


def _throughput(inputs: Sequence[str], backend: embeddings.EmbeddingBackend) -> float:
    seconds = timed(_embed_with, backend, inputs)[0] / 1000
    return len(inputs) / seconds


# Chunks encoded per backend and run: enough for several full batches, few enough for a shared machine.
BACKEND_CHUNKS = 256


def bench_backends(
    questions: Sequence[str], runs: int, backends: Sequence[embeddings.EmbeddingBackend]
) -> dict[str, dict[str, Any]]:
    """Each embedding backend side by side, in turns within each run (so a busy neighbour slows them alike):
    passages/s encoding the garden's passages as an import does, query embedding p50/p95, and how close its
    vectors are to torch's (lowest and mean cosine)."""
    rows = Passage.objects.filter(is_current=True).select_related("revision").order_by("id")[:BACKEND_CHUNKS]
    inputs = sorted((embedding_input(c.revision.title, c.text) for c in rows), key=len)
    for backend in backends:
        embeddings.load(backend)  # the ONNX export, if not cached yet, stays out of the timings
    reference = embeddings.embed(inputs, backend=embeddings.EmbeddingBackend.TORCH)
    throughput: dict[str, list[float]] = {b: [] for b in backends}
    queries: dict[str, list[dict[str, float]]] = {b: [] for b in backends}
    for _ in range(runs):
        for backend in backends:
            throughput[backend].append(_throughput(inputs, backend))
            embeddings.embed([questions[0]], backend=backend)
            samples = [timed(_embed_with, backend, [q])[0] for q in questions]
            queries[backend].append(percentiles(samples))
    results: dict[str, dict[str, Any]] = {}
    for backend in backends:
        cosines = (embeddings.embed(inputs, backend=backend) * reference).sum(1)
        results[backend] = {
            "passages": len(inputs),
            "passages_per_second": round(statistics.median(throughput[backend]), 1),
            "query_embedding": median_of_runs(queries[backend]),
            "cosine_to_torch_min": round(float(cosines.min()), 4),
            "cosine_to_torch_mean": round(float(cosines.mean()), 4),
        }
    torch_figures = results.get(embeddings.EmbeddingBackend.TORCH)
    if torch_figures:
        for figures in results.values():
            figures["passages_per_second_over_torch"] = round(
                figures["passages_per_second"] / torch_figures["passages_per_second"], 2
            )
            figures["query_p50_torch_over_this"] = round(
                torch_figures["query_embedding"]["p50_ms"] / figures["query_embedding"]["p50_ms"], 2
            )
    return results
