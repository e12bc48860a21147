"""Search the garden's passages, read an article: what the caller may see of the garden, and nothing more (the
one rule: `garden.selectors`, `Article.objects.readable`)."""

from __future__ import annotations

from dataclasses import dataclass

from dashboard.actions.callers import Caller, admit, caller_reader
from dashboard.actions.refusals import Outcome, Refused
from garden import selectors
from garden.answering.asking import QuestionError, question_clean
from garden.answering.retrieval import retrieve
from garden.models import Article, ArticleRevision, Passage
from verifier.scopes import TokenScope

ARTICLE_NOT_FOUND = "No such article."
REVISION_NOT_FOUND = "No such revision of this article."


@dataclass(frozen=True)
class PassageFound:
    """A passage the search found, its text as the caller is shown it, and how near the query it is."""

    passage: Passage
    text: str
    score: float


def passages_search(caller: Caller, query: str | None) -> tuple[str, list[PassageFound]]:
    """The query, cleaned as a question is, and the passages it finds that the caller may read, best first.
    Refused: forbidden (a token without the read scope), invalid (an empty or over-long query)."""
    admit(caller, TokenScope.READ)
    try:
        query = question_clean(query)
    except QuestionError as error:
        raise Refused(Outcome.INVALID, error.message) from None
    reader = caller_reader(caller)
    found = retrieve(query, reader=reader)
    by_id = Passage.objects.select_related("article").in_bulk([hit.passage_id for hit in found.sources])
    shown = selectors.passages_shown(by_id.values(), reader)
    return query, [
        PassageFound(by_id[hit.passage_id], shown[hit.passage_id], hit.score)
        for hit in found.sources
        if hit.passage_id in by_id
    ]


def article_read(
    caller: Caller, *, slug: str = "", title: str = "", revision_id: int | None = None
) -> tuple[Article, ArticleRevision]:
    """The article at `slug` (or titled `title`, in any case) and its revision (`revision_id`, else the current
    one) when the caller may read them; a withheld article, one of an audience not the caller's, or a revision
    holding such words is as if it did not exist. Refused: forbidden (a token without the read scope), not
    found."""
    admit(caller, TokenScope.READ)
    reader = caller_reader(caller)
    if not slug and title:
        named = Article.objects.live(reader).filter(title__iexact=title).first()
        slug = named.slug if named else ""
    article = selectors.article_get(slug, reader) if slug else None
    if article is None:
        raise Refused(Outcome.NOT_FOUND, ARTICLE_NOT_FOUND)
    revision = selectors.article_revision(article, revision_id, reader)
    if revision is None:
        raise Refused(Outcome.NOT_FOUND, REVISION_NOT_FOUND)
    return article, revision
