"""Where a link to a heading or a block of a note (`[[Note#Heading]]`, `[[Note#^id]]`) leads: the passage of
the note's current revision that holds it, found for every such link of a page in one query."""

from __future__ import annotations

import bisect
from typing import Any

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import QuerySet

from garden.models import Article, ArticleRevision, Passage
from text.markup import heading_offsets


def anchored_revisions(article_ids: list[int]) -> QuerySet[ArticleRevision]:
    """The current revisions of `article_ids`, each with its passages' ids, ends and pages in order: what an
    anchored link needs to find its passage, in one query."""
    if not article_ids:
        return ArticleRevision.objects.none()
    return (
        ArticleRevision.objects.filter(article_id__in=article_ids, superseded=False)
        .only("id", "article_id", "body", "anchors")
        .annotate(
            passage_ids=ArrayAgg("passages__id", order_by="passages__start", default=[]),
            passage_ends=ArrayAgg("passages__end", order_by="passages__start", default=[]),
            passage_pages=ArrayAgg("passages__page", order_by="passages__start", default=[]),
        )
    )


class AnchoredPassages:
    """The passages of one current revision, to find the one that holds a heading or a block: the first that
    ends after where it starts (passages do not overlap, so their ends rise with their starts)."""

    def __init__(self, revision: Any) -> None:
        self.revision = revision
        self.headings: dict[str, int] | None = None  # read once, at the first heading asked for

    def url(self, article: Article, anchor: str) -> str | None:
        revision = self.revision
        if anchor.startswith("^"):
            offset = revision.anchors.get(anchor[1:])
        else:
            if self.headings is None:
                self.headings = heading_offsets(revision.body)
            offset = self.headings.get(anchor)
        ends = [end for end in revision.passage_ends if end is not None]
        index = bisect.bisect_right(ends, offset) if offset is not None else len(ends)
        if index >= len(ends):
            return None
        # Its address is its article's and its page's: no query for what is at hand.
        passage = Passage(
            pk=revision.passage_ids[index],
            article=article,
            revision_id=revision.pk,
            page=revision.passage_pages[index],
            is_current=True,
        )
        return passage.get_absolute_url()
