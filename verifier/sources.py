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
from garden.models import Answer, AnswerSource, ArticleRevision, Passage, SearchRule
from garden.readers import ANONYMOUS, Reader, reader_of
from garden.selectors import passages_shown, revision_text_shown
from text.markup import headings_above


def passage_context(passage: Passage) -> str:
    """What a passage is about, for a judge that reads it without the rest of its note: the revision's title and
    the headings above the passage ("Stations of the line — Fellside"). Needs `passage.revision` loaded."""
    revision = passage.revision
    return " — ".join(dict.fromkeys([revision.title, *headings_above(revision.body, passage.start)]))


def answer_question(answer: Answer) -> str:
    """The question `answer` was written for, as the writer read it: Claude's standalone question for a follow-up
    it condensed, else the question as asked."""
    question = answer.question
    if question.search_rule == SearchRule.CONDENSED and question.searched_for:
        return question.searched_for
    return question.text


def answer_sources(answer: Answer) -> tuple[list[Source], dict[int, Passage]]:
    """The answer's numbered sources, then earlier passages of the same articles (to spot outdated claims):
    at most `VERIFIER_EARLIER_PASSAGES` of them, the nearest to the cited ones (`earlier_passages`)."""
    given = list(
        AnswerSource.objects.filter(answer=answer).select_related("passage__revision").order_by("number")
    )
    passages = {s.number: s.passage for s in given}
    asker = reader_of(answer.question.asked_by)  # a verification acts for the reader who asked
    earlier = earlier_passages([s.passage for s in given], settings.VERIFIER_EARLIER_PASSAGES, asker)
    # Judged as the asker reads them (the answer was written so): a link to a note not theirs names nothing.
    shown = passages_shown([*passages.values(), *earlier], asker)
    sources = [
        Source(
            index=s.number,
            text=shown[s.passage.pk],
            superseded=not s.passage.is_current,
            context=passage_context(s.passage),
        )
        for s in given
    ]
    number = len(given)
    for passage in earlier:
        number += 1
        passages[number] = passage
        sources.append(
            Source(index=number, text=shown[passage.pk], superseded=True, context=passage_context(passage))
        )
    return sources, passages


def earlier_passages(cited: Sequence[Passage], limit: int, reader: Reader = ANONYMOUS) -> list[Passage]:
    """Up to `limit` passages of the cited passages' articles that are no longer current, each wording once,
    `reader` may see (`PassageQuerySet.readable`: not one holding words of a note withheld or not theirs),
    nearest first to the cited passage of their article, with its revision loaded.

    Nearest by embedding distance, not by position: an outdated claim is an earlier wording of what a cited
    passage says now, and edits move passages (a paragraph added above shifts every ordinal after it), while an
    earlier wording of the same statement stays close to it in meaning wherever it stood. A wording still in the
    current revision is left out: it supports a claim as current, not as outdated."""
    by_article: dict[int, list[Passage]] = {}
    for passage in cited:
        by_article.setdefault(passage.article_id, []).append(passage)
    if limit <= 0 or not by_article:
        return []
    current = Passage.objects.filter(
        article_id=OuterRef("article_id"), revision__superseded=False, text=OuterRef("text")
    )
    found: list[tuple[float, int]] = []
    for article_id, mine in by_article.items():
        distances = [CosineDistance("embedding", passage.embedding) for passage in mine]
        nearest = distances[0] if len(distances) == 1 else Least(*distances)
        rows = (
            Passage.objects.readable(reader)
            .filter(
                article_id=article_id,
                revision__superseded=True,
                revision__in=ArticleRevision.objects.readable(reader),
            )
            .exclude(text__in=[passage.text for passage in mine])
            .exclude(Exists(current))
            .values("text")
            .annotate(distance=Min(nearest), first=Min("id"))
            .order_by("distance", "first")[:limit]
        )
        found += [(row["distance"], row["first"]) for row in rows]
    chosen = [pk for _, pk in sorted(found)[:limit]]
    loaded = Passage.objects.select_related("revision").in_bulk(chosen)
    return [loaded[pk] for pk in chosen]


def answer_passages(answer: Answer) -> dict[int, SourcePassage]:
    """The answer's numbered sources as the critics read them: the cited passage and its whole article, as its
    asker's page shows it (words lent by a note not theirs read as not shared: a critic's excerpt quotes it)."""
    reader = reader_of(answer.question.asked_by)
    given = AnswerSource.objects.filter(answer=answer).select_related("passage__article", "passage__revision")
    return {
        s.number: SourcePassage(
            number=s.number,
            article_slug=s.passage.article.slug,
            title=s.passage.article.title,
            text=s.passage.text,
            article_text=revision_text_shown(s.passage.revision, reader),
        )
        for s in given
    }
