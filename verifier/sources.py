"""Reads of what an answer was given, shaped for the verifier: numbered sources for the panel, passages for
the critics. Pure reads (they would sit in `selectors.py`, which holds the reads shaped for pages)."""

from __future__ import annotations

from claimcheck.critics import SourcePassage
from claimcheck.judges.types import Source
from garden.models import Answer, AnswerSource, Chunk
from garden.syntax import headings_above


def chunk_context(chunk: Chunk) -> str:
    """What a passage is about, for a judge that reads it without the rest of its note: the revision's title and
    the headings above the passage ("Stations of the line — Fellside"). Needs `chunk.revision` loaded."""
    revision = chunk.revision
    return " — ".join(dict.fromkeys([revision.title, *headings_above(revision.body, chunk.start)]))


def answer_sources(answer: Answer) -> tuple[list[Source], dict[int, Chunk]]:
    """The answer's numbered sources, then superseded revisions of the same articles (to spot outdated claims)."""
    given = list(
        AnswerSource.objects.filter(answer=answer).select_related("chunk__revision").order_by("number")
    )
    chunks = {s.number: s.chunk for s in given}
    sources = [
        Source(
            index=s.number,
            text=s.chunk.text,
            superseded=not s.chunk.is_current,
            context=chunk_context(s.chunk),
        )
        for s in given
    ]
    older = (
        Chunk.objects.filter(article__in={s.chunk.article_id for s in given}, revision__superseded=True)
        .select_related("revision")
        .order_by("article_id", "revision_id", "ordinal")
    )
    number = len(given)
    for chunk in older:
        number += 1
        chunks[number] = chunk
        sources.append(Source(index=number, text=chunk.text, superseded=True, context=chunk_context(chunk)))
    return sources, chunks


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
