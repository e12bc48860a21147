"""Reads of what an answer was given, shaped for the verifier: numbered sources for the panel, passages for
the critics. Pure reads (they would sit in `selectors.py`, which holds the reads shaped for pages)."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db.models import Exists, Min, OuterRef
from django.db.models.functions import Least
from pgvector.django import CosineDistance

from claimcheck.critics import SourcePassage
from claimcheck.judges.types import Source
from garden.models import Answer, AnswerSource, ArticleRevision, Chunk
from garden.readers import ANONYMOUS, Reader, reader_of
from garden.selectors import passages_shown
from garden.syntax import headings_above


def chunk_context(chunk: Chunk) -> str:
    """What a passage is about, for a judge that reads it without the rest of its note: the revision's title and
    the headings above the passage ("Stations of the line — Fellside"). Needs `chunk.revision` loaded."""
    revision = chunk.revision
    return " — ".join(dict.fromkeys([revision.title, *headings_above(revision.body, chunk.start)]))


def answer_sources(answer: Answer) -> tuple[list[Source], dict[int, Chunk]]:
    """The answer's numbered sources, then earlier passages of the same articles (to spot outdated claims):
    at most `VERIFIER_EARLIER_PASSAGES` of them, the nearest to the cited ones (`earlier_passages`)."""
    given = list(
        AnswerSource.objects.filter(answer=answer).select_related("chunk__revision").order_by("number")
    )
    chunks = {s.number: s.chunk for s in given}
    asker = reader_of(answer.question.asked_by)  # a verification acts for the reader who asked
    earlier = earlier_passages([s.chunk for s in given], settings.VERIFIER_EARLIER_PASSAGES, asker)
    # Judged as the asker reads them (the answer was written so): a link to a note not theirs names nothing.
    shown = passages_shown([*chunks.values(), *earlier], asker)
    sources = [
        Source(
            index=s.number,
            text=shown[s.chunk.pk],
            superseded=not s.chunk.is_current,
            context=chunk_context(s.chunk),
        )
        for s in given
    ]
    number = len(given)
    for chunk in earlier:
        number += 1
        chunks[number] = chunk
        sources.append(
            Source(index=number, text=shown[chunk.pk], superseded=True, context=chunk_context(chunk))
        )
    return sources, chunks


def earlier_passages(cited: Sequence[Chunk], limit: int, reader: Reader = ANONYMOUS) -> list[Chunk]:
    """Up to `limit` passages of the cited chunks' articles that are no longer current, each wording once,
    `reader` may see (`RevisionQuerySet.readable`: not one holding words of a note withheld or not theirs), nearest first to the
    cited passage of their article, with its revision loaded.

    Nearest by embedding distance, not by position: an outdated claim is an earlier wording of what a cited
    passage says now, and edits move passages (a paragraph added above shifts every ordinal after it), while an
    earlier wording of the same statement stays close to it in meaning wherever it stood. A wording still in the
    current revision is left out: it supports a claim as current, not as outdated."""
    by_article: dict[int, list[Chunk]] = {}
    for chunk in cited:
        by_article.setdefault(chunk.article_id, []).append(chunk)
    if limit <= 0 or not by_article:
        return []
    current = Chunk.objects.filter(
        article_id=OuterRef("article_id"), revision__superseded=False, text=OuterRef("text")
    )
    found: list[tuple[float, int]] = []
    for article_id, mine in by_article.items():
        distances = [CosineDistance("embedding", chunk.embedding) for chunk in mine]
        nearest = distances[0] if len(distances) == 1 else Least(*distances)
        rows = (
            Chunk.objects.filter(
                article_id=article_id,
                revision__superseded=True,
                revision__in=ArticleRevision.objects.readable(reader),
            )
            .exclude(text__in=[chunk.text for chunk in mine])
            .exclude(Exists(current))
            .values("text")
            .annotate(distance=Min(nearest), first=Min("id"))
            .order_by("distance", "first")[:limit]
        )
        found += [(row["distance"], row["first"]) for row in rows]
    chosen = [pk for _, pk in sorted(found)[:limit]]
    loaded = Chunk.objects.select_related("revision").in_bulk(chosen)
    return [loaded[pk] for pk in chosen]


def answer_passages(answer: Answer) -> dict[int, SourcePassage]:
    """The answer's numbered sources as the critics read them: the cited chunk and its whole article."""
    given = AnswerSource.objects.filter(answer=answer).select_related("chunk__article", "chunk__revision")
    return {
        s.number: SourcePassage(
            number=s.number,
            article_slug=s.chunk.article.slug,
            title=s.chunk.article.title,
            text=s.chunk.text,
            article_text=s.chunk.revision.body,
        )
        for s in given
    }
