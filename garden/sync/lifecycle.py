"""Notes that move, leave or come back: a moved note keeps its article, a gone one is retired (history kept),
one that returns is live again."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from garden.importer import ParsedArticle
from garden.models import Article, ArticleRevision, Chunk, Link


def garden_articles(root: Path) -> QuerySet[Article]:
    """The live articles whose current revision came from a note under `root`."""
    return Article.objects.filter(
        retired_at__isnull=True,
        revisions__superseded=False,
        revisions__source_path__startswith=f"{root}{os.sep}",
    )


def renames_follow(root: Path, notes: dict[str, ParsedArticle]) -> int:
    """A note that moved or was renamed (its text unchanged) keeps its article, history and backlinks."""
    known = set(Article.objects.filter(slug__in=notes).values_list("slug", flat=True))
    arrivals = {p.content_hash: p for slug, p in notes.items() if slug not in known}
    if not arrivals:
        return 0
    moved = 0
    for article in garden_articles(root).exclude(slug__in=notes):
        current = article.current_revision
        arrival = arrivals.pop(current.content_hash, None) if current else None
        if current is None or arrival is None:
            continue
        with transaction.atomic():
            Link.objects.filter(target=article).update(target_slug=arrival.slug)
            article.slug, article.path = arrival.slug, arrival.relative_path
            article.save(update_fields=["slug", "path", "updated_at"])
            ArticleRevision.objects.filter(pk=current.pk).update(source_path=arrival.path)
        moved += 1
    return moved


def retire_missing(root: Path, present: set[str]) -> int:
    """Articles whose note is gone from the garden are retired: no longer retrieved or listed, while their
    history, and the answers that cited them, stay."""
    retired = 0
    for article in garden_articles(root).exclude(slug__in=present):
        with transaction.atomic():
            Article.objects.filter(pk=article.pk).update(retired_at=timezone.now())
            Chunk.objects.filter(article=article, is_current=True).update(is_current=False)
        retired += 1
    return retired


def restore_returned(slugs: Sequence[str]) -> None:
    """A retired note that is back, unchanged, is live again."""
    for article in Article.objects.filter(slug__in=slugs, retired_at__isnull=False):
        with transaction.atomic():
            Article.objects.filter(pk=article.pk).update(retired_at=None)
            Chunk.objects.filter(article=article, revision__superseded=False).update(is_current=True)
