"""Reads of the garden shaped for pages and the API."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db.models import BooleanField, Count, Exists, Prefetch, QuerySet
from django.db.models.expressions import RawSQL
from django.urls import reverse

from garden.models import (
    Answer,
    AnswerSource,
    Article,
    ArticleRevision,
    Chunk,
    Image,
    RetrievedArticle,
    Theme,
    Topic,
)
from garden.syntax import EMBED, WIKILINK, heading_offset, written_key

# What readers see in place of an answer, or a passage of it, whose sources include a withheld note.
ANSWER_WITHHELD = "This answer is not shown: a note it drew on is no longer public in the garden."


@dataclass(frozen=True)
class Embedded:
    """A note another embeds: its title, its page and its current text."""

    title: str
    url: str
    body: str


def answer_get(public_id: uuid.UUID) -> Answer | None:
    """The answer at `public_id` (its address), with its question, retrieval, retrieved articles and numbered
    sources loaded; of what retrieval found, only what a reader may see (`answer.withheld` says whether the
    answer itself may be)."""
    return (
        Answer.objects.select_related("question__retrieval")
        .prefetch_related(
            Prefetch("sources", AnswerSource.objects.select_related("chunk__article", "chunk__revision")),
            Prefetch(
                "question__retrieval__articles",
                RetrievedArticle.objects.select_related("article")
                .filter(article__in=Article.objects.readable())
                .order_by("rank"),
            ),
            Prefetch("question__retrieval__topics", Topic.objects.live()),
            Prefetch("question__retrieval__themes", Theme.objects.live()),
        )
        .filter(public_id=public_id)
        .first()
    )


def article_list() -> QuerySet[Article]:
    """The live articles (readable, not retired), by title."""
    return (
        Article.objects.live()
        .prefetch_related(Prefetch("topics", Topic.objects.live()))
        .annotate(revision_count=Count("revisions"))
        .order_by("title")
    )


def article_get(slug: str) -> Article | None:
    """The article at `slug` if a reader may see it (a withheld one is as if it did not exist)."""
    return Article.objects.readable().prefetch_related("topics", "themes").filter(slug=slug).first()


def topic_get(slug: str) -> Topic | None:
    """The topic at `slug` if it has a live article."""
    return Topic.objects.live().filter(slug=slug).first()


def article_revision(article: Article, revision_id: int | None) -> ArticleRevision | None:
    """The requested revision of an article, or its current one; an older one that holds words of a note
    withheld now is as if it did not exist."""
    revisions = article.revisions.all()
    if revision_id is not None:
        revisions = revisions.readable()
    if revision_id is not None:
        return revisions.filter(pk=revision_id).first()
    return revisions.filter(superseded=False).first()


def revision_chunks(revision: ArticleRevision) -> QuerySet[Chunk]:
    return revision.chunks.order_by("ordinal")


def article_links(article: Article, revision: ArticleRevision | None = None) -> dict[str, str | None]:
    """Each target the article's note writes (lower case, no .md) -> the URL of the article it resolved to,
    or None for a red link (a note the garden does not have). A link to a heading or block of a note
    (`[[Note#Heading]]`, `[[Note#^id]]` in `revision`) -> the passage that holds it."""
    links: dict[str, str | None] = {}
    targets: dict[str, Article] = {}
    for link in article.links_out.select_related("target"):
        target = link.target if link.target is not None and not link.target.withheld else None
        for written in link.written:
            links[written] = target.get_absolute_url() if target else None  # a withheld note: a red link
            if target is not None:
                targets[written] = target
    for match in WIKILINK.finditer(revision.body if revision else ""):
        target = targets.get(written_key(match["target"]))
        anchor = (match["anchor"] or "").strip()
        chunk = _anchor_chunk(target, anchor) if target and anchor else None
        if target is not None and chunk is not None:
            chunk.article = target  # its address is its article's: no query for what is at hand
            links[f"{written_key(match['target'])}#{anchor.lower()}"] = chunk.get_absolute_url()
    return links


def _anchor_chunk(article: Article, anchor: str) -> Chunk | None:
    """The current passage of `article` that holds the heading `anchor`, or the block `^id`."""
    current = article.current_revision
    if current is None:
        return None
    offset = (
        current.anchors.get(anchor[1:].lower())
        if anchor.startswith("^")
        else heading_offset(current.body, anchor)
    )
    if offset is None:
        return None
    return current.chunks.filter(end__gt=offset).order_by("start").first()


def article_embeds(revision: ArticleRevision) -> dict[str, Embedded]:
    """The notes this revision embeds (`![[Note]]`), by the target as written, with their current text."""
    keys = {written_key(match["target"]) for match in EMBED.finditer(revision.body)}
    if not keys:
        return {}
    embedded: dict[str, Embedded] = {}
    links = revision.article.links_out.filter(written__overlap=list(keys), target__in=Article.objects.live())
    for link in links.select_related("target"):
        target = link.target
        current = target.current_revision if target else None
        if target is None or current is None:
            continue
        for key in keys.intersection(link.written):
            embedded[key] = Embedded(current.title, target.get_absolute_url(), current.body)
    return embedded


def revision_images(revision: ArticleRevision) -> dict[str, str]:
    """The images the revision shows, as written (lower case) -> the URL that serves each."""
    names = dict(Image.objects.filter(sha256__in=revision.images.values()).values_list("sha256", "name"))
    return {
        written: reverse("dashboard:image", args=[digest, names[digest]])
        for written, digest in revision.images.items()
        if digest in names
    }


def image_get(sha256: str) -> Image | None:
    """The image of this hash while a revision a reader may see shows it (`RevisionQuerySet.readable`): an image
    only a withheld note shows is as if it did not exist."""
    shown = ArticleRevision.objects.readable().filter(
        RawSQL(
            "EXISTS (SELECT 1 FROM jsonb_each_text(images) AS shown WHERE shown.value = %s)",
            [sha256],
            output_field=BooleanField(),
        )
    )
    return Image.objects.filter(sha256=sha256).filter(Exists(shown)).first()


def article_backlinks(article: Article) -> QuerySet[Article]:
    """The live articles that link to `article` ("Linked from")."""
    return Article.objects.live().filter(links_out__target=article).distinct().order_by("title")
