"""Benchmarks of the garden: import throughput (in one process and fanned out to Celery workers), query embedding,
retrieval at 1k/10k/100k chunks, the refusal gate.

Run inside a scratch database (`python manage.py bench` creates and drops one). Timings on shared machines are
noisy, so each figure is a median over repeated runs, and HNSW retrieval is compared with an exact NumPy scan
of the same vectors measured in the same run.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count
from pgvector.django import HnswIndex

from garden import bench_corpus, embeddings
from garden.golden import GoldenEntry
from garden.models import Article, ArticleRevision, Chunk, Topic, names_keep
from garden.retrieval import CANDIDATES, Thresholds, gather, retrieve, select, vector_candidates
from garden.services import embedding_input
from garden.sync import FanOutError, Workers, garden_import, workers_find

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


def _notes_to(count: int, rng: random.Random) -> None:
    """Add notes (an article, and its title and an alias as a topic: what each note of a garden without a
    `_garden.yaml` brings) until the garden has `count` live articles. Titles are one to three words of the
    garden's own passages, so they meet questions' words as a real garden's would. No passages: the cost
    measured here is the one that grows with notes (topic matching), the vector search has its own section."""
    have = Article.objects.live().count()
    if have >= count:
        return
    words = sorted(
        {w for text in Chunk.objects.values_list("text", flat=True) for w in text.split() if w.isalpha()}
    )
    start = Article.objects.filter(slug__startswith="bench-note-").count()
    for first in range(start, start + count - have, 5_000):
        last = min(first + 5_000, start + count - have)
        titles = [" ".join(rng.sample(words, rng.randint(1, 3))) for _ in range(first, last)]
        articles = Article.objects.bulk_create(
            Article(slug=f"bench-note-{n}", title=title)
            for n, title in zip(range(first, last), titles, strict=True)
        )
        topics = Topic.objects.bulk_create(
            Topic(slug=f"bench-note-{n}", title=title, aliases=[f"{title} note {n}"])
            for n, title in zip(range(first, last), titles, strict=True)
        )
        Article.topics.through.objects.bulk_create(
            Article.topics.through(article_id=a.pk, topic_id=t.pk)
            for a, t in zip(articles, topics, strict=True)
        )
        names_keep(Topic, topics)
    with connection.cursor() as cursor:
        for table in ("garden_article", "garden_topic", "garden_name", "garden_article_topics"):
            cursor.execute(f"ANALYZE {table}")


def bench_notes(
    in_scope: Sequence[GoldenEntry],
    out_of_scope: Sequence[GoldenEntry],
    runs: int,
    counts: Sequence[int] = NOTE_COUNTS,
    seed: int = 7,
) -> dict[str, Any]:
    """Hybrid retrieval (in-scope questions, their vectors given) and the refusal decision (out-of-scope ones,
    embedding included) as the garden grows to each count of notes, in one run; and p50 at the most notes over
    p50 at the fewest, which should stay near 1."""
    rng = random.Random(seed)
    vectors = embeddings.embed([q.question for q in in_scope])
    thresholds = Thresholds.from_settings()
    results: list[dict[str, Any]] = []
    for count in sorted(counts):
        began = time.perf_counter()
        _notes_to(count, rng)
        fill_seconds = time.perf_counter() - began
        hybrid, refusal = [], []
        for _ in range(runs):
            for question, vector in zip(in_scope, vectors, strict=True):
                hybrid.append(_timed(_hybrid, question.question, vector, thresholds)[0])
            refusal += [_timed(retrieve, q.question)[0] for q in out_of_scope]
        results.append(
            {
                "notes": Article.objects.live().count(),
                "fill_seconds": round(fill_seconds, 1),
                "hybrid_retrieval": percentiles(hybrid),
                "refusal_decision": percentiles(refusal),
                "refused_out_of_scope": round(
                    sum(retrieve(q.question).empty for q in out_of_scope) / max(len(out_of_scope), 1), 3
                ),
            }
        )
    # The sections after this one measure the garden as it was.
    Article.objects.filter(slug__startswith="bench-note-").delete()
    Topic.objects.filter(slug__startswith="bench-note-").delete()
    first, last = results[0], results[-1]
    return {
        "sizes": results,
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
