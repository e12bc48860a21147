"""Benchmarks of the garden: import throughput (in one process and fanned out to Celery workers), query embedding,
retrieval at 1k/10k/100k chunks, the refusal gate.

Run inside a scratch database (`python manage.py bench` creates and drops one). Timings on shared machines are
noisy, so each figure is a median over repeated runs, and HNSW retrieval is compared with an exact NumPy scan
of the same vectors measured in the same run.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import hashlib
import inspect
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count
from pgvector.django import HnswIndex

from garden import bench_corpus, embeddings, logseq
from garden.gardening import editor_markup_removed
from garden.golden import GoldenEntry
from garden.models import Article, ArticleRevision, Chunk, Topic, names_keep
from garden.notes import parse_article_file, written_links
from garden.retrieval import (
    CANDIDATES,
    Thresholds,
    gather,
    matched_topics,
    retrieve,
    select,
    vector_candidates,
)
from garden.retrieval_report import Observed, calibrate, held_out, measure, observe
from garden.services import embedding_input
from garden.sync import FanOutError, Workers, garden_import, workers_find
from garden.vocabulary import NAME_TITLE_LIMIT
from garden.walk import article_files

SIZES = (1_000, 10_000, 100_000)
NOTE_COUNTS = (50, 5_000, 50_000)
T = TypeVar("T")
# The retrieval and hnsw sections fill the garden with real passages (garden.bench_corpus), cached here under
# .run/, in articles whose slugs start so.
CORPUS_FOLDER = bench_corpus.CACHE_FOLDER
CORPUS_SLUG = "bench-corpus-"
CORPUS_ROWS = {"article__slug__startswith": CORPUS_SLUG}
# The corpus's first passages are held out: their first sentences are queries, the passages never chunks.
CORPUS_QUERIES = 100
EF_SEARCHES = (40, 60, 80, 100, 150, 200, 300, 450, 600, 1000)
# (m, ef_construction) pairs `bench --hnsw-sweep` builds and measures on the corpus at 100k chunks: the
# configured index first (measured as the retrieval section built it, not built again), then cheaper builds,
# which needed a wider ef_search for the same recall (README).
HNSW_PAIRS = ((12, 800), (16, 200), (12, 400))
HNSW_INDEX = "chunk_embedding_hnsw"


def _timed(fn: Callable[..., T], *args: Any) -> tuple[float, T]:
    """Milliseconds `fn(*args)` took, and what it returned."""
    began = time.perf_counter()
    result = fn(*args)
    return (time.perf_counter() - began) * 1000, result


def _exact_top(matrix: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> npt.NDArray[np.intp]:
    """Row numbers of the CANDIDATES most similar rows, best first: the exact answer HNSW approximates."""
    similarities = matrix @ vector
    top = np.argpartition(-similarities, min(CANDIDATES, len(similarities) - 1))[:CANDIDATES]
    return top[np.argsort(-similarities[top])]


def _hybrid(question: str, vector: npt.NDArray[np.float32], thresholds: Thresholds) -> bool:
    return select(gather(question, vector), thresholds, max_articles=5, max_sources=8).empty


def percentiles(samples: Sequence[float], digits: int = 2) -> dict[str, float]:
    """p50 and p95 of millisecond timings (the nearest sample for p95), rounded to `digits`."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered), digits), "p95_ms": round(p95, digits)}


def _median_of_runs(runs: Sequence[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(run[key] for run in runs), 2) for key in runs[0]}


def _p95_range(runs: Sequence[dict[str, float]]) -> list[float]:
    """Lowest and highest p95 of the runs: how far one run's figure can be trusted on a shared machine."""
    return [min(run["p95_ms"] for run in runs), max(run["p95_ms"] for run in runs)]


def bench_import(folders: Sequence[Path]) -> dict[str, Any]:
    report = garden_import(folders)
    return {
        "articles": report.created + report.revised,
        "chunks": report.chunks,
        "seconds": round(report.seconds, 2),
        "chunks_per_second": round(report.chunks_per_second, 1),
    }


GENERATED_WORDS = [
    "hive",
    "frame",
    "queen",
    "brood",
    "nectar",
    "pollen",
    "orchard",
    "graft",
    "rootstock",
    "blossom",
    "harvest",
    "cider",
    "press",
    "bramble",
    "clover",
    "hedge",
    "fence",
    "gate",
    "path",
    "shed",
    "ladder",
    "basket",
    "crate",
    "label",
    "jar",
    "honey",
    "wax",
    "smoker",
    "veil",
    "glove",
    "apple",
    "pear",
    "plum",
    "quince",
]


def generate_garden(folder: Path, count: int, seed: int = 7) -> Path:
    """`count` notes as a kept garden has them: ten folders, no front matter on every other note, tags, links
    to other notes (and one missing), about 500 characters each."""
    rng = random.Random(seed)
    for number in range(count):
        words = [" ".join(rng.choice(GENERATED_WORDS) for _ in range(12)) for _ in range(4)]
        head = (
            ""
            if number % 2
            else f"---\naliases: [note {number}]\ntags: [generated, batch-{number % 7}]\n---\n"
        )
        path = folder / f"Folder {number % 10}" / f"Note {number:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"{head}# Note {number}\n\nItem {number} was recorded in {1900 + number % 120}: {words[0]}. "
            f"{words[1]} #generated\n\nSee [[Note {(number * 7) % count:04d}]] and [[Missing {number % 3}]]. "
            f"{words[2]}. {words[3]}.\n",
            encoding="utf-8",
        )
    return folder


def bench_large_garden(count: int) -> dict[str, Any]:
    """A first import of `count` generated notes, the embedding model's own encode of the same chunks in the
    same run (so the import's overhead beyond the model is a ratio of two figures measured together), and a
    re-import of the unchanged garden."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = generate_garden(Path(scratch) / "garden", count)
        first = garden_import([folder])
        inputs = [
            embedding_input(c.revision.title, c.text)
            for c in Chunk.objects.filter(revision__source_path__startswith=scratch).select_related(
                "revision"
            )
        ]
        encode_seconds = _timed(embeddings.embed, sorted(inputs, key=len))[0] / 1000
        again = garden_import([folder])
        # Gone again, so the retrieval figures that follow are measured on the same garden as before.
        Article.objects.filter(revisions__source_path__startswith=scratch).delete()
    return {
        "notes": count,
        "chunks": first.chunks,
        "first_import_seconds": round(first.seconds, 1),
        "chunks_per_second": round(first.chunks_per_second, 1),
        "import_embedding_seconds": round(first.embed_seconds, 1),
        "encode_seconds": round(encode_seconds, 1),
        "overhead_beyond_encode_pct": round(100 * (first.seconds - encode_seconds) / encode_seconds, 1),
        "reimport_unchanged_seconds": round(again.seconds, 1),
        "reimport_embedded": again.embedded,
    }


# Notes of the garden whose import is fanned out: about a thousand passages, long enough that a worker's first
# batch (its warm-up) hardly counts, short enough for three imports on a shared machine.
DISTRIBUTED_NOTES = 1000
WORKERS_START_SECONDS = 120  # a worker process loads torch and the model before it answers


def _workers_start(count: int, database_url: str) -> tuple[list[subprocess.Popen[bytes]], Workers]:
    """`count` Celery workers of one process each (`--concurrency 1`, as `docker compose up --scale worker=N`
    would run them), once all of them, and no others, answer."""
    logs = Path(settings.BASE_DIR) / ".run"
    logs.mkdir(exist_ok=True)
    prefix = f"bench-fanout-{os.getpid()}-{count}"
    processes = [
        subprocess.Popen(
            [
                *(sys.executable, "-m", "celery", "-A", "config", "worker", "--concurrency", "1"),
                *("--loglevel", "WARNING", "--without-gossip", "--without-mingle"),
                *("--hostname", f"{prefix}-{number}@%h"),
            ],
            cwd=settings.BASE_DIR,
            env={**os.environ, "DATABASE_URL": database_url},
            stdin=subprocess.DEVNULL,
            stdout=(logs / f"bench-fanout-worker-{number}.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
        for number in range(count)
    ]
    deadline = time.monotonic() + WORKERS_START_SECONDS
    while True:
        try:
            workers = workers_find(timeout=1.0)
        except FanOutError:
            workers = Workers(names=(), processes=0)
        others = [name for name in workers.names if not name.startswith(prefix)]
        if others:
            _workers_stop(processes)
            raise RuntimeError(f"other Celery workers answer on this broker and would take batches: {others}")
        if len(workers.names) == count:
            return processes, workers
        if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
            _workers_stop(processes)
            raise RuntimeError(
                f"the bench's Celery workers did not start; see {logs}/bench-fanout-worker-*.log"
            )


def _workers_stop(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait(30)


def _import_figures(folder: Path, scratch: str, workers: Workers | None) -> dict[str, Any]:
    """A first import of `folder` (in this process, or fanned out to `workers`), then its articles deleted."""
    report = garden_import([folder], workers=workers)
    Article.objects.filter(revisions__source_path__startswith=scratch).delete()
    return {
        "chunks": report.chunks,
        "seconds": round(report.seconds, 1),
        "chunks_per_second": round(report.chunks_per_second, 1),
        "embed_seconds": round(report.embed_seconds, 1),
        "write_seconds": round(report.write_seconds, 1),
    }


def bench_distributed_import(database_url: str, count: int = DISTRIBUTED_NOTES) -> dict[str, Any]:
    """The first import of `count` generated notes, as `import_garden --workers` runs it, against one Celery
    worker process, then two (started here, stopped after), beside the same import in this process. chunks/s
    is the whole import's: reading, planning and writing here, embedding there; embed_seconds is summed over
    the batches (over the workers' processes), write_seconds is this process's writing."""
    results: dict[str, Any] = {"notes": count, "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as scratch:
        folder = generate_garden(Path(scratch) / "garden", count)
        embeddings.load()  # this process's model is loaded before its import is timed, as the workers' are
        results["in_process"] = _import_figures(folder, scratch, None)
        for count_workers, key in ((1, "one_worker"), (2, "two_workers")):
            processes, workers = _workers_start(count_workers, database_url)
            try:
                results[key] = {"workers": count_workers, **_import_figures(folder, scratch, workers)}
            finally:
                _workers_stop(processes)
    one, two = results["one_worker"]["chunks_per_second"], results["two_workers"]["chunks_per_second"]
    results["two_over_one"] = round(two / one, 2) if one else None
    return results


def bench_query_embedding(questions: Sequence[str], runs: int) -> dict[str, float]:
    embeddings.embed_one("warm up")
    samples = [_timed(embeddings.embed_one, q)[0] for _ in range(runs) for q in questions]
    return percentiles(samples)


def _corpus_needed(size: int) -> int:
    """Passages of the corpus a garden of `size` current chunks needs: the held-out queries, and the rows the
    garden's own chunks do not fill."""
    return CORPUS_QUERIES + max(
        0, size - Chunk.objects.filter(is_current=True).exclude(**CORPUS_ROWS).count()
    )


def corpus_for(size: int) -> bench_corpus.Corpus:
    """This install's corpus (cached under .run/; extracted and embedded now where it is not), enough for
    gardens of up to `size` chunks."""
    return bench_corpus.corpus_load(_corpus_needed(size), Path(settings.BASE_DIR) / ".run" / CORPUS_FOLDER)


def _corpus_queries(questions: Sequence[GoldenEntry], corpus: bench_corpus.Corpus) -> list[str]:
    """Real questions: the golden set's, and the first sentence of each held-out passage (never stored)."""
    held_out = [bench_corpus.first_sentence(p.text) for p in corpus.passages[:CORPUS_QUERIES]]
    return [q.question for q in questions] + held_out


def _corpus_articles(titles: Sequence[str]) -> dict[str, tuple[Article, ArticleRevision, int]]:
    """For each title, its corpus article, that article's revision and the next free ordinal in it."""
    slugs = {title: CORPUS_SLUG + hashlib.sha1(title.encode()).hexdigest()[:16] for title in titles}
    existing = {a.slug: a for a in Article.objects.filter(slug__in=slugs.values())}
    Article.objects.bulk_create(
        Article(slug=slug, title=title[:300]) for title, slug in slugs.items() if slug not in existing
    )
    articles = {a.slug: a for a in Article.objects.filter(slug__in=slugs.values())}
    revisions = {r.article_id: r for r in ArticleRevision.objects.filter(article__in=articles.values())}
    ArticleRevision.objects.bulk_create(
        ArticleRevision(article=a, title=a.title, body="", content_hash="bench-corpus")
        for a in articles.values()
        if a.pk not in revisions
    )
    revisions = {r.article_id: r for r in ArticleRevision.objects.filter(article__in=articles.values())}
    ordinals = dict(
        Chunk.objects.filter(article__in=articles.values())
        .values("article_id")
        .annotate(count=Count("id"))
        .values_list("article_id", "count")
    )
    return {
        title: (articles[slug], revisions[articles[slug].pk], ordinals.get(articles[slug].pk, 0))
        for title, slug in slugs.items()
    }


def _fill_to(size: int, corpus: bench_corpus.Corpus) -> float:
    """Add the corpus's next passages, as current chunks of one article per source (module or document) with
    their cached vectors, until the garden holds `size`; the seconds the HNSW index took to build (0: nothing
    was added)."""
    have = Chunk.objects.filter(is_current=True).count()
    if have >= size:
        return 0.0
    stored = Chunk.objects.filter(**CORPUS_ROWS).count()
    first = CORPUS_QUERIES + stored
    rows = range(first, first + size - have)
    if rows.stop > len(corpus.passages):
        raise ValueError(f"the corpus has {len(corpus.passages)} passages; {rows.stop} are needed")
    articles = _corpus_articles(sorted({corpus.passages[row].title for row in rows}))
    # Building the HNSW index once over all rows is far faster than growing it row by row.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_indexdef('chunk_embedding_hnsw'::regclass)")
        index_definition = cursor.fetchone()[0]
        cursor.execute("DROP INDEX chunk_embedding_hnsw")
    batch: list[Chunk] = []
    for row in rows:
        passage = corpus.passages[row]
        article, revision, ordinal = articles[passage.title]
        articles[passage.title] = (article, revision, ordinal + 1)
        batch.append(
            Chunk(
                revision=revision,
                article=article,
                ordinal=ordinal,
                text=passage.text.replace("\x00", "\ufffd"),  # PostgreSQL text holds no NUL
                start=0,
                end=len(passage.text),
                embedding=corpus.vectors[row].tolist(),
                embedded_by=corpus.embedder,
            )
        )
        if len(batch) == 5_000:
            Chunk.objects.bulk_create(batch)
            batch = []
    Chunk.objects.bulk_create(batch)
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        began = time.perf_counter()
        cursor.execute(index_definition)
        seconds = time.perf_counter() - began
        cursor.execute("ANALYZE garden_chunk")
    return seconds


def corpus_remove() -> None:
    """Take the corpus's articles out again, so the sections after measure the garden as it was."""
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM garden_chunk WHERE article_id IN (SELECT id FROM garden_article WHERE slug LIKE %s)",
            [CORPUS_SLUG + "%"],
        )
    Article.objects.filter(slug__startswith=CORPUS_SLUG).delete()


def _current_matrix() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    rows = list(Chunk.objects.filter(is_current=True).values_list("id", "embedding"))
    ids = np.asarray([row[0] for row in rows], dtype=np.int64)
    return ids, np.asarray([np.asarray(row[1], dtype=np.float32) for row in rows])


def _sql_exact_scan(vector: npt.NDArray[np.float32]) -> float:
    """Milliseconds for the vector search's own query with the index switched off: what PostgreSQL takes
    to find the exact nearest chunks, the scan HNSW replaces (the NumPy scan skips the round trip)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        return _timed(vector_candidates, vector)[0]


def corpus_figures(corpus: bench_corpus.Corpus, load_seconds: float) -> dict[str, Any]:
    return {
        "passages": len(corpus.passages),
        "held_out_queries": CORPUS_QUERIES,
        "embedder": corpus.embedder,
        "sources_hash": corpus.sources_hash,
        "cache": str(corpus.folder),
        "built_seconds": round(corpus.built_seconds, 1),
        "load_seconds": round(load_seconds, 1),
    }


def bench_retrieval(
    questions: Sequence[GoldenEntry], runs: int, sizes: Sequence[int] = SIZES
) -> dict[str, Any]:
    """At each size, the garden filled with the corpus's real passages: HNSW (through SQL), the same query with
    the index off (PostgreSQL's exact scan), the in-process NumPy scan and hybrid retrieval, interleaved
    question by question, and HNSW's recall@10 against the exact scan. Queries: the golden set's questions and
    held-out passages' first sentences."""
    load_seconds, corpus = _timed(corpus_for, max(sizes))
    queries = _corpus_queries(questions, corpus)
    vectors = embeddings.embed(queries)
    thresholds = Thresholds.from_settings()
    results = []
    for size in sorted(sizes):
        fill_ms, index_seconds = _timed(_fill_to, size, corpus)
        ids, matrix = _current_matrix()
        hnsw_runs, numpy_runs, sql_runs, hybrid_runs, recalls = [], [], [], [], []
        for _ in range(runs):
            hnsw, exact, sql, hybrid = [], [], [], []
            for question, vector in zip(queries, vectors, strict=True):
                elapsed, found = _timed(vector_candidates, vector)
                hnsw.append(elapsed)
                elapsed, _ = _timed(_exact_top, matrix, vector)
                exact.append(elapsed)
                sql.append(_sql_exact_scan(vector))
                elapsed, _ = _timed(_hybrid, question, vector, thresholds)
                hybrid.append(elapsed)
                exact_best = set(ids[_exact_top(matrix, vector)[:10]].tolist())
                recalls.append(len({chunk_id for chunk_id, *_ in found[:10]} & exact_best) / 10)
            hnsw_runs.append(percentiles(hnsw))
            numpy_runs.append(percentiles(exact))
            sql_runs.append(percentiles(sql))
            hybrid_runs.append(percentiles(hybrid))
        vector_search, numpy_scan = _median_of_runs(hnsw_runs), _median_of_runs(numpy_runs)
        sql_scan = _median_of_runs(sql_runs)
        results.append(
            {
                "chunks": len(matrix),
                "fill_seconds": round(fill_ms / 1000, 1),
                "index_build_seconds": round(index_seconds, 1),
                "index_mib": round(_index_bytes() / 2**20, 1),
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
                "hybrid_retrieval": _median_of_runs(hybrid_runs),
            }
        )
    return {
        "corpus": corpus_figures(corpus, load_seconds / 1000),
        "queries": {"golden": len(questions), "held_out_first_sentences": len(queries) - len(questions)},
        "sizes": results,
    }


def _configured_hnsw() -> HnswIndex:
    index = next(index for index in Chunk._meta.indexes if index.name == HNSW_INDEX)
    assert isinstance(index, HnswIndex)
    return index


def _rebuild_hnsw(index: HnswIndex) -> float:
    """Seconds to drop the chunk HNSW index and build `index` in its place over the current rows."""
    with connection.schema_editor() as editor:
        editor.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        editor.execute("SET maintenance_work_mem = '1GB'")
        began = time.perf_counter()
        editor.add_index(Chunk, index)
        seconds = time.perf_counter() - began
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE garden_chunk")
    return seconds


def _hnsw_curve(vectors: npt.NDArray[np.float32], runs: int, ef_searches: Sequence[int]) -> dict[str, Any]:
    """Recall@10 against the exact scan and p50/p95 per `ef_search`, and the exact scan's, timed together."""
    ids, matrix = _current_matrix()
    exact_best = [set(ids[_exact_top(matrix, vector)[:10]].tolist()) for vector in vectors]
    for vector in vectors:  # Untimed: brings the new index into the cache.
        vector_candidates(vector, ef_search=max(ef_searches))
    exact_runs: list[dict[str, float]] = []
    hnsw_runs: dict[int, list[dict[str, float]]] = {ef: [] for ef in ef_searches}
    recalls: dict[int, float] = {}
    # One pass per method and run, so no timing pays for the cache another method just filled.
    for _ in range(runs):
        exact_runs.append(percentiles([_timed(_exact_top, matrix, vector)[0] for vector in vectors]))
        for ef in ef_searches:
            timed = [_timed(partial(vector_candidates, ef_search=ef), vector) for vector in vectors]
            hnsw_runs[ef].append(percentiles([elapsed for elapsed, _ in timed]))
            recalls[ef] = float(
                np.mean(
                    [
                        len({chunk_id for chunk_id, *_ in found[:10]} & best) / 10
                        for (_, found), best in zip(timed, exact_best, strict=True)
                    ]
                )
            )
    return {
        "numpy_exact_scan": {**_median_of_runs(exact_runs), "p95_ms_range": _p95_range(exact_runs)},
        "ef_search": [
            {
                "ef_search": ef,
                "recall_at_10": round(recalls[ef], 3),
                **_median_of_runs(hnsw_runs[ef]),
                "p95_ms_range": _p95_range(hnsw_runs[ef]),
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
    """At `size` current chunks: for each (m, ef_construction) pair (default: the configured index), the index
    build time, its size and the recall@10/latency curve over `ef_search`, beside the exact NumPy scan of the
    same run. An index already built with a pair's parameters is measured as it is (its build time is the
    fill's, reported by the retrieval section when that built it). With `restore`, the configured index is
    built again at the end if another was measured last. The garden is filled with the corpus's real
    passages, queried as in `bench_retrieval`."""
    corpus = corpus_for(size)
    fill_build_seconds = _fill_to(size, corpus)
    configured = _configured_hnsw()
    vectors = embeddings.embed(_corpus_queries(questions, corpus))
    ids, matrix = _current_matrix()
    similarities = -np.sort(-(vectors @ matrix.T), axis=1)
    curves = []
    configured_pair = (int(configured.m or 0), int(configured.ef_construction or 0))
    for m, ef_construction in pairs or [configured_pair]:
        index = HnswIndex(
            name=HNSW_INDEX,
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
                "index_mib": round(_index_bytes() / 2**20, 1),
                **curve,
            }
        )
    if restore and _index_pair() != configured_pair:
        _rebuild_hnsw(configured)
    return {
        "chunks": len(ids),
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
    """The (m, ef_construction) the chunk HNSW index in place was built with."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_indexdef(%s::regclass)", [HNSW_INDEX])
        definition = str(cursor.fetchone()[0])
    found = re.search(r"m='?(\d+)'?, ef_construction='?(\d+)'?", definition)
    return (int(found[1]), int(found[2])) if found else None


def _index_bytes() -> int:
    """On-disk size of the chunk HNSW index; what it needs in memory to be searched without disk reads."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_relation_size(%s::regclass)", [HNSW_INDEX])
        return int(cursor.fetchone()[0])


def _pgvector_version() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    return str(row[0]) if row else ""


# Packages whose docstrings make the notes section's garden: prose on many subjects (web, arrays, statistics,
# symbols, graphs, tensors, fake data), none of them railways. Read in this order, files shuffled by the seed.
NOTE_PACKAGES = ("django", "numpy", "scipy", "sklearn", "sympy", "networkx", "torch", "faker", "hypothesis")
# Notes up to this count get their passage embedded; those beyond are their names alone (a topic each), so
# 50,000 notes cost the topic lookup they would in a real garden without 50,000 passages to embed per run.
PASSAGE_NOTES = 5_000
NOTE_MIN_CHARS = 200  # a docstring shorter than this is a signature's gloss, not a note
NOTE_MAX_CHARS = 1_200  # about one passage of the importer's
NAME_ALIAS_LIMIT = 100  # Topic.aliases holds names of up to 100 characters
_DOC_SECTION = re.compile(
    r"^\s*(?:Parameters|Returns|Yields|Raises|Examples?|Notes|See Also|Attributes|Arguments|Args|References)"
    r"\s*:?\s*\n(?:\s*[-=~]{3,}\s*\n)?|^\s*(?::param|:return|>>>|\.\. )",
    re.MULTILINE,
)
_UNDERLINED = re.compile(r"^[^\n]*\n\s*[-=~^]{3,}\s*$", re.MULTILINE)  # a reST heading: not prose
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class Note:
    """A note that reads like one: a title naming its subject, an alias (where it lives), a passage of prose."""

    title: str
    alias: str
    text: str


def _subject(name: str) -> str:
    """An object's name as a note's title: `select_related` is "Select related", `QuerySet` "Query set"."""
    spaced = _CAMEL.sub(" ", name.strip("_")).replace("_", " ").strip().lower()
    return spaced[:1].upper() + spaced[1:]


def _prose(docstring: str) -> str:
    """A docstring's prose: up to its first section of parameters, examples and the like, at most
    NOTE_MAX_CHARS, cut at a sentence's end."""
    text = inspect.cleandoc(docstring)
    cut = _DOC_SECTION.search(text)
    text = " ".join(_UNDERLINED.sub("", text[: cut.start() if cut else None]).split())
    if len(text) > NOTE_MAX_CHARS:
        text = text[:NOTE_MAX_CHARS]
        text = text[: text.rfind(". ") + 1] or text
    return text


def _docstring_notes(path: Path, module: str) -> Iterator[Note]:
    """A note for every module, class and function of the file: the prose of its docstring as its passage
    (empty when it has none long enough: such a note is its names alone)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return
    nodes: list[tuple[str, str, ast.AST]] = [(module.rsplit(".", 1)[-1], module, tree)]
    nodes += [
        (node.name, f"{module}.{node.name}", node)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    for name, alias, node in nodes:
        title = _subject(name)[:NAME_TITLE_LIMIT]
        if not title or name.startswith("test"):
            continue
        docstring = ast.get_docstring(node, clean=False)  # type: ignore[arg-type]
        text = _prose(docstring) if docstring else ""
        yield Note(
            title=title, alias=alias[-NAME_ALIAS_LIMIT:], text=text if len(text) >= NOTE_MIN_CHARS else ""
        )


def real_notes(count: int, with_text: int = PASSAGE_NOTES, seed: int = 7) -> list[Note]:
    """`count` notes built from text on this machine, the first `with_text` with a passage: the docstrings of
    the installed NOTE_PACKAGES, each note titled by its subject (the object it documents) with its dotted
    path as an alias; the rest are the names of other objects alone. The same packages give the same notes
    (files in sorted order, shuffled by `seed`); a text or a dotted path is kept once. Cached in
    `.run/bench-notes/` (reading the packages takes a minute or two)."""
    site = Path(np.__file__).parents[1]
    versions = [
        (package, getattr(sys.modules.get(package) or __import__(package), "__version__", ""))
        for package in NOTE_PACKAGES
    ]
    key = hashlib.sha256(repr((versions, count, with_text, seed, NOTE_MIN_CHARS)).encode()).hexdigest()[:16]
    cache = Path(settings.BASE_DIR) / ".run" / "bench-notes" / f"notes-{key}.json"
    if cache.exists():
        return [Note(**fields) for fields in json.loads(cache.read_text(encoding="utf-8"))]
    files = sorted(
        path
        for package in NOTE_PACKAGES
        for path in (site / package).rglob("*.py")
        if "tests" not in path.parts
    )
    random.Random(seed).shuffle(files)
    texted: dict[str, Note] = {}
    named: dict[str, Note] = {}
    for path in files:
        module = ".".join(path.relative_to(site).with_suffix("").parts).removesuffix(".__init__")
        for note in _docstring_notes(path, module):
            if note.text and len(texted) < with_text:
                texted.setdefault(note.text, note)
            else:
                named.setdefault(note.alias, Note(note.title, note.alias, ""))
        if len(texted) >= with_text and len(texted) + len(named) >= count:
            break
    notes = [*texted.values(), *named.values()][:count]
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps([dataclasses.asdict(note) for note in notes]), encoding="utf-8")
    return notes


def _note_vectors(notes: Sequence[Note]) -> npt.NDArray[np.float32]:
    """The notes' passages embedded as the import embeds them, cached in `.run/bench-notes/` by embedder and
    text (embedding 5,000 passages takes a minute or more; the texts and the model decide the vectors)."""
    inputs = [embedding_input(note.title, note.text) for note in notes]
    digest = hashlib.sha256("\0".join([embeddings.embedder(), *inputs]).encode()).hexdigest()[:16]
    cache = Path(settings.BASE_DIR) / ".run" / "bench-notes" / f"{digest}.npy"
    if cache.exists():
        return np.load(cache)
    vectors = embeddings.embed(inputs)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, vectors)
    return vectors


def _notes_to(count: int, notes: Sequence[Note]) -> int:
    """Add notes (an article, its title and its alias as a topic, as a note of a garden without a
    `_garden.yaml` brings; and, for the first PASSAGE_NOTES, its passage) until the garden has `count` live
    articles. Returns the notes with a passage now in the garden."""
    have = Article.objects.live().count()
    start = Article.objects.filter(slug__startswith="bench-note-").count()
    wanted = notes[start : start + max(0, count - have)]
    with_text = [note for note in wanted if note.text]
    vectors = _note_vectors(with_text) if with_text else np.zeros((0, embeddings.DIMENSIONS), np.float32)
    for first in range(0, len(wanted), 5_000):
        batch = wanted[first : first + 5_000]
        numbers = range(start + first, start + first + len(batch))
        articles = Article.objects.bulk_create(
            Article(slug=f"bench-note-{n}", title=note.title) for n, note in zip(numbers, batch, strict=True)
        )
        topics = Topic.objects.bulk_create(
            Topic(slug=f"bench-note-{n}", title=note.title, aliases=[note.alias])
            for n, note in zip(numbers, batch, strict=True)
        )
        Article.topics.through.objects.bulk_create(
            Article.topics.through(article_id=a.pk, topic_id=t.pk)
            for a, t in zip(articles, topics, strict=True)
        )
        names_keep(Topic, topics)
        texted = [(a, note) for a, note in zip(articles, batch, strict=True)][
            : max(0, len(with_text) - first)
        ]
        revisions = ArticleRevision.objects.bulk_create(
            ArticleRevision(article=a, title=note.title, body=note.text, content_hash=a.slug)
            for a, note in texted
        )
        Chunk.objects.bulk_create(
            Chunk(
                revision=revision,
                article=a,
                ordinal=0,
                text=note.text,
                start=0,
                end=len(note.text),
                embedding=vectors[first + i].tolist(),
                embedded_by=embeddings.embedder(),
            )
            for i, (revision, (a, note)) in enumerate(zip(revisions, texted, strict=True))
        )
    with connection.cursor() as cursor:
        for table in (
            "garden_article",
            "garden_topic",
            "garden_name",
            "garden_article_topics",
            "garden_chunk",
        ):
            cursor.execute(f"ANALYZE {table}")
    return Chunk.objects.filter(article__slug__startswith="bench-note-").count()


def _gate_figures(observed: Sequence[Observed], thresholds: Thresholds) -> dict[str, Any]:
    figures = measure(observed, thresholds)
    return {
        "thresholds": figures["thresholds"],
        "refused_out_of_scope": figures["out_of_scope_refused"],
        "answered_in_scope": figures["in_scope_answered"],
        "recall_at_5": figures["recall_at_5"],
    }


def _share(flags: Iterable[bool]) -> float | None:
    values = list(flags)
    return round(sum(values) / len(values), 3) if values else None


def _why_through(item: Observed, thresholds: Thresholds) -> dict[str, Any] | None:
    """What let an out-of-scope question through the gate (its topics, counted articles and themes, by title);
    None when it was refused."""
    result = select(item.candidates, thresholds, max_articles=5, max_sources=8)
    if result.empty:
        return None
    articles = dict(
        Article.objects.filter(pk__in=[a.article_id for a in result.articles]).values_list("pk", "title")
    )
    return {
        "question": item.question.question,
        "topics": list(Topic.objects.filter(pk__in=result.topic_ids).values_list("title", flat=True)),
        "articles": [
            {
                "title": articles.get(a.article_id),
                "vector": round(a.vector_score, 3),
                "text": round(a.text_score, 3),
            }
            for a in result.articles
        ],
        "themes": len(result.theme_ids),
    }


def bench_notes(
    in_scope: Sequence[GoldenEntry],
    out_of_scope: Sequence[GoldenEntry],
    runs: int,
    counts: Sequence[int] = NOTE_COUNTS,
    seed: int = 7,
) -> dict[str, Any]:
    """As the garden grows to each count of notes (real-looking ones, `real_notes`), in one run: hybrid
    retrieval (in-scope questions, their vectors given) and the refusal decision (out-of-scope ones, embedding
    included) timed, p50 at the most notes over p50 at the fewest (which should stay near 1); and the gate's
    precision: the share of out-of-scope golden questions refused and of in-scope ones answered, with the
    settings' thresholds and with thresholds calibrated on the garden at that size (`retrieval_report
    --calibrate`), the latter also on halves of the golden set they were not fitted on."""
    notes = real_notes(max(counts), with_text=min(max(counts), PASSAGE_NOTES), seed=seed)
    vectors = embeddings.embed([q.question for q in in_scope])
    thresholds = Thresholds.from_settings()
    questions = [*in_scope, *out_of_scope]
    results: list[dict[str, Any]] = []
    for count in sorted(counts):
        began = time.perf_counter()
        passages = _notes_to(count, notes)
        fill_seconds = time.perf_counter() - began
        hybrid, refusal = [], []
        for _ in range(runs):
            for question, vector in zip(in_scope, vectors, strict=True):
                hybrid.append(_timed(_hybrid, question.question, vector, thresholds)[0])
            refusal += [_timed(partial(retrieve, thresholds=thresholds), q.question)[0] for q in out_of_scope]
        observed = observe(questions)
        gate = _gate_figures(observed, thresholds)
        results.append(
            {
                "notes": Article.objects.live().count(),
                "notes_with_a_passage": passages,
                "fill_seconds": round(fill_seconds, 1),
                "hybrid_retrieval": percentiles(hybrid),
                "refusal_decision": percentiles(refusal),
                "refused_out_of_scope": gate["refused_out_of_scope"],
                # Out-of-scope questions a topic name matched in: now, and had every stretch been a name
                # (before a name needed more than one everyday word).
                "out_of_scope_named": _share(bool(matched_topics(q.question)) for q in out_of_scope),
                "out_of_scope_named_by_any_stretch": _share(
                    Topic.objects.live_named_in(q.question).exists() for q in out_of_scope
                ),
                "answered_in_scope": gate["answered_in_scope"],
                "settings": gate,
                "calibrated": {
                    **_gate_figures(observed, calibrate(observed)),
                    "held_out": held_out(observed),
                },
                "let_through": [
                    why
                    for item in observed
                    if not item.question.in_scope and (why := _why_through(item, thresholds))
                ],
            }
        )
    # The sections after this one measure the garden as it was.
    Article.objects.filter(slug__startswith="bench-note-").delete()
    Topic.objects.filter(slug__startswith="bench-note-").delete()
    first, last = results[0], results[-1]
    # The sizes up to PASSAGE_NOTES add passages as well as names; beyond it only names: this ratio is the
    # cost of the notes alone.
    same_passages = next(r for r in results if r["notes_with_a_passage"] == last["notes_with_a_passage"])
    return {
        "notes_from": f"docstrings of {', '.join(NOTE_PACKAGES)}",
        "sizes": results,
        "hybrid_p50_most_over_fewest_with_as_many_passages": round(
            last["hybrid_retrieval"]["p50_ms"] / max(same_passages["hybrid_retrieval"]["p50_ms"], 1e-6), 2
        ),
        "hybrid_p50_most_over_fewest": round(
            last["hybrid_retrieval"]["p50_ms"] / max(first["hybrid_retrieval"]["p50_ms"], 1e-6), 2
        ),
        "refusal_p50_most_over_fewest": round(
            last["refusal_decision"]["p50_ms"] / max(first["refusal_decision"]["p50_ms"], 1e-6), 2
        ),
    }


def bench_refusal(questions: Sequence[GoldenEntry], runs: int) -> dict[str, float]:
    """The whole refusal decision for out-of-scope questions: embedding, retrieval and the gate."""
    return percentiles([_timed(retrieve, q.question)[0] for _ in range(runs) for q in questions])


def _embed_with(backend: embeddings.EmbeddingBackend, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    return embeddings.embed(texts, backend=backend)


def _throughput(inputs: Sequence[str], backend: embeddings.EmbeddingBackend) -> float:
    seconds = _timed(_embed_with, backend, inputs)[0] / 1000
    return len(inputs) / seconds


# Chunks encoded per backend and run: enough for several full batches, few enough for a shared machine.
BACKEND_CHUNKS = 256


def bench_backends(
    questions: Sequence[str], runs: int, backends: Sequence[embeddings.EmbeddingBackend]
) -> dict[str, dict[str, Any]]:
    """Each embedding backend side by side, in turns within each run (so a busy neighbour slows them alike):
    chunks/s encoding the garden's chunks as an import does, query embedding p50/p95, and how close its
    vectors are to torch's (lowest and mean cosine)."""
    rows = Chunk.objects.filter(is_current=True).select_related("revision").order_by("id")[:BACKEND_CHUNKS]
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
            samples = [_timed(_embed_with, backend, [q])[0] for q in questions]
            queries[backend].append(percentiles(samples))
    results: dict[str, dict[str, Any]] = {}
    for backend in backends:
        cosines = (embeddings.embed(inputs, backend=backend) * reference).sum(1)
        results[backend] = {
            "chunks": len(inputs),
            "chunks_per_second": round(statistics.median(throughput[backend]), 1),
            "query_embedding": _median_of_runs(queries[backend]),
            "cosine_to_torch_min": round(float(cosines.min()), 4),
            "cosine_to_torch_mean": round(float(cosines.mean()), 4),
        }
    torch_figures = results.get(embeddings.EmbeddingBackend.TORCH)
    if torch_figures:
        for figures in results.values():
            figures["chunks_per_second_over_torch"] = round(
                figures["chunks_per_second"] / torch_figures["chunks_per_second"], 2
            )
            figures["query_p50_torch_over_this"] = round(
                torch_figures["query_embedding"]["p50_ms"] / figures["query_embedding"]["p50_ms"], 2
            )
    return results


# Garden sizes whose first import is measured in a process of its own: its peak memory must not grow with the
# garden beyond the notes in flight (issue: peak at 50,000 within 1.2x of the peak at 5,000).
MEMORY_NOTE_COUNTS = (5_000, 50_000)


def _import_process(folder: Path, database_url: str) -> dict[str, Any]:
    """`import_garden folder` in a process of its own (the embedding model loaded there, as a scheduled sync
    has it): its wall time and its peak resident memory, read from the kernel's account of that child."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "import_garden", str(folder), "--no-progress"],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DATABASE_URL": database_url},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"import_garden {folder} failed:\n{errors.decode(errors='replace')[-3000:]}")
    return {"seconds": time.perf_counter() - began, "peak_mib": usage.ru_maxrss / 1024}


def bench_import_memory(
    database_url: str, counts: Sequence[int], questions: Sequence[GoldenEntry], runs: int
) -> dict[str, Any]:
    """The first import of generated gardens of each size, each by `import_garden` in a process of its own:
    seconds and chunks/s (the process's wall time: its start and the model's loading, a few seconds, included)
    and the process's peak memory (the model's own included); then, on the largest garden,
    asking the golden questions (retrieval and the local synthesiser, as a reader's ask, the check aside):
    p50/p95. The gardens are removed after."""
    from garden.answering import question_ask
    from garden.models import Question

    sizes: dict[str, Any] = {}
    asks: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        for count in counts:
            folder = generate_garden(Path(scratch) / f"garden-{count}", count).resolve()
            figures = _import_process(folder, database_url)
            chunks = Chunk.objects.filter(article__garden=str(folder), is_current=True).count()
            sizes[str(count)] = {
                "chunks": chunks,
                "seconds": round(figures["seconds"], 1),
                "chunks_per_second": round(chunks / figures["seconds"], 1),
                "peak_mib": round(figures["peak_mib"]),
            }
            if count == max(counts):
                asked_since = Question.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
                for _ in range(runs):
                    asks += [_timed(partial(question_ask, text=q.question))[0] for q in questions]
                Question.objects.filter(pk__gt=asked_since).delete()
            Article.objects.filter(garden=str(folder)).delete()
    peaks = [sizes[str(count)]["peak_mib"] for count in counts]
    return {
        "sizes": sizes,
        "peak_largest_over_smallest": round(peaks[-1] / peaks[0], 2) if peaks[0] else None,
        "ask_on_largest": percentiles(asks),
    }


GRAPH_PAGES = 300  # the size of the graph issue 23 measured: a public graph of 330 pages and journals


def generate_graph_pair(folder: Path, count: int, seed: int = 11) -> tuple[Path, Path]:
    """A Logseq graph of `count` pages and journals (`:triple-lowbar` names, namespaces, page properties,
    outline blocks with ids and properties, block references and embeds, macros, a page of properties alone in
    every ten) and a Markdown vault of as many notes with the same words, the references written out: the
    same passages to embed, so two imports of them differ by what reading a graph costs."""
    rng = random.Random(seed)
    graph, vault = folder / "graph", folder / "vault"
    (graph / "logseq").mkdir(parents=True)
    (graph / "logseq" / "config.edn").write_text(
        '{:meta/version 1 :file/name-format :triple-lowbar :journal/page-title-format "MMM do, yyyy"}\n'
    )
    sentences = [
        [" ".join(rng.choice(GENERATED_WORDS) for _ in range(12)).capitalize() + "." for _ in range(4)]
        for _ in range(count)
    ]
    for number, (first, second, third, fourth) in enumerate(sentences):
        referenced = sentences[(number * 7 + 3) % count][0]
        uuid = f"00000000-0000-4000-8000-{number:012d}"
        other = f"00000000-0000-4000-8000-{(number * 7 + 3) % count:012d}"
        name = f"Topic {number % 10}/Page {number:04d}"
        if number % 10 == 9:  # a page of properties alone: its description is its text
            logseq_text = f"type:: [[Topic {number % 10}]]\ndescription:: {first} {second}\n"
            markdown_text = f"# {name}\n\n{first} {second}\n"
        else:
            logseq_text = (
                f"alias:: page {number}\ntags:: [[generated]], batch-{number % 7}\n\n"
                f"- {first}\n  id:: {uuid}\n  collapsed:: true\n\t- {second} [[{name}]]\n"
                f"- As written elsewhere: (({other}))\n- {third} {{{{query (todo now)}}}}\n- {fourth}\n"
            )
            markdown_text = (
                f"---\naliases: [page {number}]\ntags: [generated, batch-{number % 7}]\n---\n# {name}\n\n"
                f"- {first}\n\t- {second} [[{name}]]\n- As written elsewhere: {referenced}\n- {third}\n- {fourth}\n"
            )
        if number % 5 == 4:
            day = datetime.date(2025, 1, 1) + datetime.timedelta(days=number)
            logseq_path = graph / "journals" / f"{day:%Y_%m_%d}.md"
        else:
            logseq_path = graph / "pages" / f"{name.replace('/', '___')}.md"
        markdown_path = vault / f"Topic {number % 10}" / f"Page {number:04d}.md"
        for path, text in ((logseq_path, logseq_text), (markdown_path, markdown_text)):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return graph, vault


def _read_seconds(folder: Path) -> float:
    """Reading a garden as an import does, without the database: its notes parsed, a graph's resolved."""
    began = time.perf_counter()
    root = folder.resolve()
    graph = logseq.graph_of(root)
    notes = [parse_article_file(path, root, graph=graph) for path in article_files(root)]
    if graph is not None:
        logseq.pages_resolved(
            notes, body_words=lambda text: editor_markup_removed(text)[0], links_of=written_links
        )
    return time.perf_counter() - began


def bench_logseq_import(count: int = GRAPH_PAGES, runs: int = 3) -> dict[str, Any]:
    """First imports of a generated Logseq graph and of a Markdown vault of the same size and words, in turn
    in the same run (`runs` times each, every import into a garden emptied first): their seconds, and the
    graph's over the vault's (issue 23 asks for 1.2x at most)."""
    seconds: dict[str, list[float]] = {"logseq": [], "markdown": []}
    reading: dict[str, list[float]] = {"logseq": [], "markdown": []}
    chunks: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as scratch:
        graph, vault = generate_graph_pair(Path(scratch), count)
        for run in range(runs):
            order = [("logseq", graph), ("markdown", vault)]
            for kind, folder in order if run % 2 else order[::-1]:
                reading[kind].append(_read_seconds(folder))
                report = garden_import([folder])
                seconds[kind].append(report.seconds)
                chunks[kind] = report.chunks
                Article.objects.filter(garden=str(folder.resolve())).delete()
    logseq_s, markdown_s = statistics.median(seconds["logseq"]), statistics.median(seconds["markdown"])
    return {
        "pages": count,
        "runs": runs,
        "logseq_chunks": chunks["logseq"],
        "markdown_chunks": chunks["markdown"],
        "logseq_seconds": round(logseq_s, 2),
        "markdown_seconds": round(markdown_s, 2),
        "logseq_over_markdown": round(logseq_s / markdown_s, 3) if markdown_s else None,
        "logseq_reading_seconds": round(statistics.median(reading["logseq"]), 3),
        "markdown_reading_seconds": round(statistics.median(reading["markdown"]), 3),
    }
