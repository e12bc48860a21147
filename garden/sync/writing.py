"""Writing one note's new revision: its article, topics, themes, chunks and links, all in one transaction; and
the topics and themes of a garden's vocabulary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from garden.importer import ParsedArticle, slugify
from garden.models import Article, ArticleRevision, Chunk, Link, Theme, Topic
from garden.services import revision_store
from garden.sync.linking import ResolvedLink
from garden.vocabulary import Vocabulary


@dataclass
class Pending:
    parsed: ParsedArticle
    spans: list[tuple[int, int]]
    vectors: list[list[float]] = field(default_factory=list)
    links: list[ResolvedLink] = field(default_factory=list)
    images: dict[str, str] = field(default_factory=dict)  # as written -> Image sha256


def _upsert(model: Any, specs: dict[str, dict[str, Any]]) -> None:
    """Create or update topics (or themes) by slug, in three queries however many there are."""
    existing = {row.slug: row for row in model.objects.filter(slug__in=specs)}
    fields = sorted({name for spec in specs.values() for name in spec})
    model.objects.bulk_create(
        [model(slug=slug, **spec) for slug, spec in specs.items() if slug not in existing]
    )
    changed = []
    for slug, row in existing.items():
        if any(getattr(row, name) != value for name, value in specs[slug].items()):
            for name, value in specs[slug].items():
                setattr(row, name, value)
            changed.append(row)
    if changed:
        model.objects.bulk_update(changed, fields)


def vocabulary_apply(vocabulary: Vocabulary) -> None:
    def title(slug: str, spec: dict[str, Any]) -> str:
        return str(spec.get("title") or slug.replace("-", " ").title())

    topics = {slugify(slug): spec or {} for slug, spec in vocabulary.topics.items()}
    themes = {slugify(slug): spec or {} for slug, spec in vocabulary.themes.items()}
    _upsert(
        Topic,
        {
            s: {"title": title(s, v), "aliases": [str(a) for a in v.get("aliases") or []]}
            for s, v in topics.items()
        },
    )
    _upsert(
        Theme,
        {
            s: {"title": title(s, v), "keywords": [str(k) for k in v.get("keywords") or []]}
            for s, v in themes.items()
        },
    )


def notes_changed(notes: Sequence[ParsedArticle]) -> list[ParsedArticle]:
    """The notes whose text was never imported. A text imported before (current or superseded) is not
    imported again, so re-importing an older snapshot after a newer one never turns the clock back."""
    known: set[tuple[str, str]] = set()
    for start in range(0, len(notes), 1000):
        slugs = [note.slug for note in notes[start : start + 1000]]
        known.update(
            ArticleRevision.objects.filter(article__slug__in=slugs).values_list(
                "article__slug", "content_hash"
            )
        )
    return [note for note in notes if (note.slug, note.content_hash) not in known]


@dataclass(frozen=True)
class Known:
    """What a group of notes refers to, read once for the group: topics, themes and link targets by slug."""

    topics: dict[str, Topic]
    themes: dict[str, Theme]
    articles: dict[str, int]

    @classmethod
    def of(cls, group: Sequence[Pending]) -> Known:
        topic_slugs = {slug for p in group for slug in p.parsed.topics}
        theme_slugs = {slug for p in group for slug in p.parsed.themes}
        # Named in front matter with no vocabulary entry: created under a title made from the slug.
        vocabulary_apply(
            Vocabulary(
                topics={
                    s: {}
                    for s in topic_slugs
                    - set(Topic.objects.filter(slug__in=topic_slugs).values_list("slug", flat=True))
                },
                themes={
                    s: {}
                    for s in theme_slugs
                    - set(Theme.objects.filter(slug__in=theme_slugs).values_list("slug", flat=True))
                },
            )
        )
        targets = {link.target_slug for p in group for link in p.links if link.exists}
        return cls(
            topics={t.slug: t for t in Topic.objects.filter(slug__in=topic_slugs)},
            themes={t.slug: t for t in Theme.objects.filter(slug__in=theme_slugs)},
            articles=dict(Article.objects.filter(slug__in=targets).values_list("slug", "pk")),
        )


@transaction.atomic
def article_write(pending: Pending, known: Known) -> bool:
    """Store one article's new revision with its chunks and links, all or nothing. True when it is new."""
    parsed = pending.parsed
    article, created = Article.objects.get_or_create(slug=parsed.slug, defaults={"title": parsed.title})
    article.title = parsed.title
    article.path = parsed.relative_path
    article.aliases = list(parsed.aliases)
    article.tags = list(parsed.tags)
    article.retired_at = None  # a note that left the garden and came back, edited
    article.save()
    article.topics.set([known.topics[slug] for slug in parsed.topics])
    article.themes.set([known.themes[slug] for slug in parsed.themes])
    revision = revision_store(
        article,
        parsed.title,
        parsed.body,
        parsed.date,
        parsed.path,
        parsed.content_hash,
        parsed.anchors,
        pending.images,
    )
    Chunk.objects.bulk_create(
        Chunk(
            revision=revision,
            article=article,
            ordinal=i,
            text=parsed.body[start:end],
            start=start,
            end=end,
            embedding=vector,
        )
        for i, ((start, end), vector) in enumerate(zip(pending.spans, pending.vectors, strict=True))
    )
    article.links_out.all().delete()
    Link.objects.bulk_create(
        Link(
            source=article,
            target_slug=link.target_slug,
            text=link.text[:300],
            # A note of this group written before this one is a target too.
            target_id=known.articles.get(link.target_slug) if link.exists else None,
            written=list(link.written),
        )
        for link in pending.links
    )
    Link.objects.filter(target_slug=article.slug, target__isnull=True).update(target=article)
    known.articles[article.slug] = article.pk  # later notes of the group may link to it
    return created
