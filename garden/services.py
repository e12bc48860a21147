"""Writes to the garden's articles: the one writer of revisions (`revisions_write`), which an import's notes
(`garden.sync.writing`) and an edit in the admin (`revision_create`) both go through.

A revision's `content_hash` tells the text it was made from from any other. The import compares it with a file's
to leave an unchanged note alone, so for an imported note it is the hash of its file, as read:
- a note: SHA-256 of its text with Unix line ends and no byte-order mark (`garden.formats.files.content_hash`);
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
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from pgvector import Vector
from pgvector.psycopg.vector import register_vector_info
from psycopg.types import TypeInfo

from garden.formats.note import Borrowed
from garden.languages import SIMPLE, note_language
from garden.models import Article, ArticleRevision, Passage
from garden.passages import page_of, passage_spans
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
    # The stretches of `body` that hold another note's words (resolved Logseq blocks): (start, end, its place).
    borrowed: Sequence[Borrowed] = ()
    pages: Sequence[int] = ()  # a PDF's: where each page starts in body
    # The language its note names, as written ("de", "german"); empty when it names none, and its words or the
    # garden's language (`GARDEN_LANGUAGE`) decide (`garden.languages.note_language`).
    language: str = ""


def lent(borrowed: Iterable[Borrowed], start: int, end: int) -> list[str]:
    """Where the notes live whose words the passage `start`..`end` of a body holds, of its `borrowed` stretches."""
    return sorted({place for a, b, place in borrowed if a < end and start < b})


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
            shows=sorted({place for _, _, place in item.borrowed}),
        )
        for item in new
    )
    embedded_by = embeddings.embedder()
    configurations = _configurations()
    _passages_copy(
        (
            revision.pk,
            revision.article_id,
            i,
            item.body[start:end],
            start,
            end,
            page_of(item.pages, start),
            lent(item.borrowed, start, end),
            revision.article_id in live,
            Vector(vector),
            embedded_by,
            configurations.get(language, configurations[SIMPLE]),
        )
        for item, revision in zip(new, revisions, strict=True)
        for language in [note_language(item.language, item.body, settings.GARDEN_LANGUAGE)]
        for i, ((start, end), vector) in enumerate(zip(item.spans, item.vectors, strict=True))
    )
    return revisions


# A passage's columns as `_passages_copy` writes them (its search vector PostgreSQL derives from its text and
# language).
PASSAGE_COLUMNS = {
    "revision_id": "int8",
    "article_id": "int8",
    "ordinal": "int4",
    "text": "text",
    "start": "int4",
    "end": "int4",
    "page": "int4",
    "shows": "varchar[]",
    "is_current": "bool",
    "embedding": "vector",
    "embedded_by": "varchar",
    "language": "oid",  # a `regconfig` is its configuration's oid, as COPY's binary format writes it
}


def _configurations() -> dict[str, int]:
    """The oids of the server's text-search configurations, by name: a language it has none for is `simple`."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT cfgname, oid FROM pg_ts_config WHERE pg_ts_config_is_visible(oid)")
        return {name: int(oid) for name, oid in cursor.fetchall()}


def _passages_copy(rows: Iterable[tuple[object, ...]]) -> None:
    """Write passages (`PASSAGE_COLUMNS`, in order) by PostgreSQL's COPY, vectors in binary: an import writes
    thousands, and as INSERTs each of their 384 numbers was written and parsed as text."""
    columns = ", ".join(f'"{name}"' for name in PASSAGE_COLUMNS)
    with connection.cursor() as cursor:
        raw = cursor.cursor  # psycopg's own, to COPY; the vector type is known to it alone
        register_vector_info(raw, TypeInfo.fetch(raw.connection, "vector"))
        with raw.copy(f"COPY {Passage._meta.db_table} ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(list(PASSAGE_COLUMNS.values()))
            for row in rows:
                copy.write_row(row)


@transaction.atomic
def revision_create(
    *, article: Article, title: str, body: str, date: datetime.date | None = None, source_path: str = ""
) -> ArticleRevision:
    """A new current revision of `article` (e.g. edited in admin): the old one is kept, superseded, and its
    language, when it had passages, stays the article's."""
    language = (
        Passage.objects.filter(article=article, revision__superseded=False)
        .values_list("language", flat=True)
        .first()
    )
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
                language=language or "",
            )
        ]
    )
    return revision
