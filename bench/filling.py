"""The garden filled with the corpus's real passages (bench.corpus) for the retrieval and hnsw sections, and
the exact scan of its vectors that HNSW approximates."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db import connection
from django.db.models import Count

from bench.corpus import CACHE_FOLDER, Corpus, corpus_load, first_sentence
from garden.answering.retrieval import CANDIDATES
from garden.golden import GoldenEntry
from garden.models import Article, ArticleRevision, Passage
from garden.sync.indexing import VECTOR_INDEX

# The corpus is cached under .run/CACHE_FOLDER; its passages are stored in articles whose slugs start so.
CORPUS_SLUG = "bench-corpus-"
CORPUS_ROWS = {"article__slug__startswith": CORPUS_SLUG}
# The corpus's first passages are held out: their first sentences are queries, and they are never stored.
CORPUS_QUERIES = 100


def exact_top(matrix: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> npt.NDArray[np.intp]:
    """Row numbers of the CANDIDATES most similar rows, best first: the exact answer HNSW approximates."""
    similarities = matrix @ vector
    top = np.argpartition(-similarities, min(CANDIDATES, len(similarities) - 1))[:CANDIDATES]
    return top[np.argsort(-similarities[top])]


def _corpus_needed(size: int) -> int:
    """Passages of the corpus a garden of `size` current passages needs: the held-out queries, and the rows the
    garden's own passages do not fill."""
    return CORPUS_QUERIES + max(
        0, size - Passage.objects.filter(is_current=True).exclude(**CORPUS_ROWS).count()
    )


def corpus_for(size: int) -> Corpus:
    """This install's corpus (cached under .run/; extracted and embedded now where it is not), enough for
    gardens of up to `size` passages."""
    return corpus_load(_corpus_needed(size), Path(settings.BASE_DIR) / ".run" / CACHE_FOLDER)


def corpus_queries(questions: Sequence[GoldenEntry], corpus: Corpus) -> list[str]:
    """Real questions: the golden set's, and the first sentence of each held-out passage (never stored)."""
    held_out = [first_sentence(p.text) for p in corpus.passages[:CORPUS_QUERIES]]
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
        Passage.objects.filter(article__in=articles.values())
        .values("article_id")
        .annotate(count=Count("id"))
        .values_list("article_id", "count")
    )
    return {
        title: (articles[slug], revisions[articles[slug].pk], ordinals.get(articles[slug].pk, 0))
        for title, slug in slugs.items()
    }


def fill_to(size: int, corpus: Corpus) -> float:
    """Add the corpus's next passages, as current passages of one article per source (module or document) with
    their cached vectors, until the garden holds `size`; the seconds the HNSW index took to build (0: nothing
    was added)."""
    have = Passage.objects.filter(is_current=True).count()
    if have >= size:
        return 0.0
    stored = Passage.objects.filter(**CORPUS_ROWS).count()
    first = CORPUS_QUERIES + stored
    rows = range(first, first + size - have)
    if rows.stop > len(corpus.passages):
        raise ValueError(f"the corpus has {len(corpus.passages)} passages; {rows.stop} are needed")
    articles = _corpus_articles(sorted({corpus.passages[row].title for row in rows}))
    # Building the HNSW index once over all rows is far faster than growing it row by row.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_indexdef(%s::regclass)", [VECTOR_INDEX])
        index_definition = cursor.fetchone()[0]
        cursor.execute(f"DROP INDEX {VECTOR_INDEX}")
    batch: list[Passage] = []
    for row in rows:
        passage = corpus.passages[row]
        article, revision, ordinal = articles[passage.title]
        articles[passage.title] = (article, revision, ordinal + 1)
        batch.append(
            Passage(
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
            Passage.objects.bulk_create(batch)
            batch = []
    Passage.objects.bulk_create(batch)
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        began = time.perf_counter()
        cursor.execute(index_definition)
        seconds = time.perf_counter() - began
        cursor.execute("ANALYZE garden_passage")
    return seconds


def corpus_remove() -> None:
    """Take the corpus's articles out again, so the sections after measure the garden as it was."""
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM garden_passage WHERE article_id IN (SELECT id FROM garden_article WHERE slug LIKE %s)",
            [CORPUS_SLUG + "%"],
        )
    Article.objects.filter(slug__startswith=CORPUS_SLUG).delete()


def current_matrix() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    rows = list(Passage.objects.filter(is_current=True).values_list("id", "embedding"))
    ids = np.asarray([row[0] for row in rows], dtype=np.int64)
    return ids, np.asarray([np.asarray(row[1], dtype=np.float32) for row in rows])


def corpus_figures(corpus: Corpus, load_seconds: float) -> dict[str, Any]:
    return {
        "passages": len(corpus.passages),
        "held_out_queries": CORPUS_QUERIES,
        "embedder": corpus.embedder,
        "sources_hash": corpus.sources_hash,
        "cache": str(corpus.folder),
        "built_seconds": round(corpus.built_seconds, 1),
        "load_seconds": round(load_seconds, 1),
    }
