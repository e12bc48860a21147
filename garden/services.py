"""Writes to the garden's articles: the one writer of revisions (`revisions_write`), which an import's notes
(`garden.sync.writing`) and an edit in the admin (`revision_create`) both go through.

A revision's `content_hash` tells the text it was made from from any other. The import compares it with a file's
to leave an unchanged note alone, so for an imported note it is the hash of its file, as read:
- a note: SHA-256 of its text with Unix line ends and no byte-order mark (`garden.formats.markdown.content_hash`);
- a PDF: SHA-256 of its bytes (`garden.formats.pdf.reading.pdf_hash`);
- a Logseq page whose text holds other pages' blocks: SHA-256 of its file's hash and the text those resolved to,
  a line apart (`garden.formats.logseq`), so it changes when they do.
A revision with no file (an edit in the admin) is the SHA-256 of its title and body, a line apart
(`edit_hash`). Never change how a file is hashed: every garden imported before would be imported again, in full.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from django.db import transaction
from django.utils import timezone

from garden.chunking import page_of, passage_spans
from garden.models import Article, ArticleRevision, Passage
from garden.readers import ALL_AUDIENCES
from providers import embeddings


def embedding_input(title: str, text: str) -> str:
    # The title gives a passage its context ("It opened in 1889" says nothing without it).
    return f"{title}: {text}"


def edit_hash(title: str, body: str) -> str:
    """The `content_hash` of a revision that no file was read for (an edit in the admin)."""
    return hashlib.sha256(f"{title}\n{body}".encode()).hexdigest()


@dataclass(frozen=True)
class NewRevision:
    """One revision to write, with its passages: `spans` (start, end) in `body`, a vector for each."""

    article: Article
    title: str
    body: str
    spans: Sequence[tuple[int, int]]
    vectors: Sequence[Sequence[float]] | npt.NDArray[np.float32]
    # The hash of the file it was read from (see the module's docstring); None when there is none.
    content_hash: str | None = None
    date: datetime.date | None = None
    source_path: str = ""
    anchors: dict[str, int] = field(default_factory=dict)  # block id -> offset in body
    images: dict[str, str] = field(default_factory=dict)  # as written -> Image sha256
    shows: Sequence[str] = ()  # where the notes live whose words it holds (resolved Logseq blocks)
    pages: Sequence[int] = ()  # a PDF's: where each page starts in body


def revisions_supersede(article_ids: Iterable[int]) -> None:
    """The current revisions of these articles, and their passages, are current no more: a new one follows."""
    previous = list(
        ArticleRevision.objects.select_for_update()
        .filter(article_id__in=list(article_ids), superseded=False)
        .values_list("pk", flat=True)
    )
    ArticleRevision.objects.filter(pk__in=previous).update(superseded=True, superseded_at=timezone.now())
    Passage.objects.filter(revision__in=previous).update(is_current=False)


def revisions_write(new: Sequence[NewRevision]) -> list[ArticleRevision]:
    """Write new current revisions of their articles, with their passages, in a few queries however many: each
    article's current revision is kept, superseded. The caller's transaction makes it all or nothing.

    Only a live article's passages are retrieved (`Passage.is_current`): a withheld or retired one's new revision
    (an edit in the admin) is current in its history, and its passages are retrieved once it is live again."""
    revisions_supersede([item.article.pk for item in new])
    live = set(
        Article.objects.live(ALL_AUDIENCES)
        .filter(pk__in=[item.article.pk for item in new])
        .values_list("pk", flat=True)
    )
    revisions = ArticleRevision.objects.bulk_create(
        ArticleRevision(
            article=item.article,
            title=item.title,
            body=item.body,
            date=item.date,
            source_path=item.source_path,
            content_hash=edit_hash(item.title, item.body) if item.content_hash is None else item.content_hash,
            anchors=item.anchors,
            images=item.images,
            shows=list(item.shows),
        )
        for item in new
    )
    embedded_by = embeddings.embedder()
    Passage.objects.bulk_create(
        Passage(
            revision=revision,
            article_id=revision.article_id,
            ordinal=i,
            text=item.body[start:end],
            start=start,
            end=end,
            page=page_of(item.pages, start),
            embedding=vector,
            embedded_by=embedded_by,
            is_current=revision.article_id in live,
        )
        for item, revision in zip(new, revisions, strict=True)
        for i, ((start, end), vector) in enumerate(zip(item.spans, item.vectors, strict=True))
    )
    return revisions


@transaction.atomic
def revision_create(
    *, article: Article, title: str, body: str, date: datetime.date | None = None, source_path: str = ""
) -> ArticleRevision:
    """A new current revision of `article` (e.g. edited in admin): the old one is kept, superseded."""
    spans = [(s.start, s.end) for s in passage_spans(body)]
    vectors = embeddings.embed([embedding_input(title, body[a:b]) for a, b in spans])
    (revision,) = revisions_write(
        [
            NewRevision(
                article=article,
                title=title,
                body=body,
                spans=spans,
                vectors=vectors,
                date=date,
                source_path=source_path,
            )
        ]
    )
    return revision
