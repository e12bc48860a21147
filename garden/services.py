"""Writes to the garden's articles outside an import: a new revision (say, edited in the admin)."""

from __future__ import annotations

import datetime
import hashlib

from django.db import transaction
from django.utils import timezone

from garden import embeddings
from garden.chunking import chunk_spans
from garden.models import Article, ArticleRevision, Chunk


def embedding_input(title: str, text: str) -> str:
    # The title gives a passage its context ("It opened in 1889" says nothing without it).
    return f"{title}: {text}"


def revision_store(
    article: Article,
    title: str,
    body: str,
    date: datetime.date | None,
    source_path: str,
    content_hash: str,
    anchors: dict[str, int] | None = None,
    images: dict[str, str] | None = None,
) -> ArticleRevision:
    now = timezone.now()
    previous = list(article.revisions.select_for_update().filter(superseded=False))
    ArticleRevision.objects.filter(pk__in=[r.pk for r in previous]).update(superseded=True, superseded_at=now)
    Chunk.objects.filter(revision__in=previous).update(is_current=False)
    return ArticleRevision.objects.create(
        article=article,
        title=title,
        body=body,
        date=date,
        source_path=source_path,
        content_hash=content_hash,
        anchors=anchors or {},
        images=images or {},
    )


@transaction.atomic
def revision_create(
    *, article: Article, title: str, body: str, date: datetime.date | None = None, source_path: str = ""
) -> ArticleRevision:
    """A new current revision of `article` (e.g. edited in admin): the old one is kept, superseded."""
    spans = [(s.start, s.end) for s in chunk_spans(body)]
    vectors = embeddings.embed([embedding_input(title, body[a:b]) for a, b in spans])
    revision = revision_store(
        article, title, body, date, source_path, hashlib.sha256(f"{title}\n{body}".encode()).hexdigest()
    )
    Chunk.objects.bulk_create(
        Chunk(revision=revision, article=article, ordinal=i, text=body[a:b], start=a, end=b, embedding=v)
        for i, ((a, b), v) in enumerate(zip(spans, vectors, strict=True))
    )
    return revision
