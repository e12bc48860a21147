"""Writes to the garden's articles outside an import: a new revision (say, edited in the admin)."""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from garden import embeddings
from garden.chunking import chunk_spans
from garden.models import Article, ArticleRevision, Chunk


def embedding_input(title: str, text: str) -> str:
    # The title gives a passage its context ("It opened in 1889" says nothing without it).
    return f"{title}: {text}"


def revisions_supersede(article_ids: Iterable[int]) -> None:
    """The current revisions of these articles, and their chunks, are current no more: a new one follows."""
    previous = list(
        ArticleRevision.objects.select_for_update()
        .filter(article_id__in=list(article_ids), superseded=False)
        .values_list("pk", flat=True)
    )
    ArticleRevision.objects.filter(pk__in=previous).update(superseded=True, superseded_at=timezone.now())
    Chunk.objects.filter(revision__in=previous).update(is_current=False)


@transaction.atomic
def revision_create(
    *, article: Article, title: str, body: str, date: datetime.date | None = None, source_path: str = ""
) -> ArticleRevision:
    """A new current revision of `article` (e.g. edited in admin): the old one is kept, superseded."""
    spans = [(s.start, s.end) for s in chunk_spans(body)]
    vectors = embeddings.embed([embedding_input(title, body[a:b]) for a, b in spans])
    revisions_supersede([article.pk])
    revision = ArticleRevision.objects.create(
        article=article,
        title=title,
        body=body,
        date=date,
        source_path=source_path,
        content_hash=hashlib.sha256(f"{title}\n{body}".encode()).hexdigest(),
    )
    embedded_by = embeddings.embedder()
    Chunk.objects.bulk_create(
        Chunk(
            revision=revision,
            article=article,
            ordinal=i,
            text=body[a:b],
            start=a,
            end=b,
            embedding=v,
            embedded_by=embedded_by,
        )
        for i, ((a, b), v) in enumerate(zip(spans, vectors, strict=True))
    )
    return revision
