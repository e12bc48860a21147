"""Writing notes' new revisions: their articles, topics, themes, passages and links, a group in a few queries; and
the topics and themes of a garden's vocabulary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import OuterRef, Subquery
from django.utils import timezone

from garden.formats.note import ParsedArticle
from garden.models import Article, ArticleRevision, Link, Theme, Topic
from garden.models.vocabulary import names_keep
from garden.services import NewRevision, revisions_write
from garden.sync.linking import ResolvedLink
from garden.vocabulary import Vocabulary, fits
from text.markup import slugify


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


def vocabulary_apply(vocabulary: Vocabulary, *, derived: bool = False) -> None:
    """Store topics and themes by slug, with their names. `derived`: the topics are derived from the notes of an
    import, whose names are stored per note as each group of notes is written (`topic_names.names_place`),
    never as the topics' own: a name an audience's note gives is never everyone's, even for a moment."""

    def title(slug: str, spec: dict[str, Any]) -> str:
        return str(spec.get("title") or slug.replace("-", " ").title())

    topics = {slugify(slug): spec or {} for slug, spec in vocabulary.topics.items()}
    themes = {slugify(slug): spec or {} for slug, spec in vocabulary.themes.items()}
    topics = {s: v for s, v in topics.items() if fits(s, title(s, v))}
    themes = {s: v for s, v in themes.items() if fits(s, title(s, v))}
    topic_specs: dict[str, dict[str, Any]] = {
        s: {"title": title(s, v), "aliases": [str(a) for a in v.get("aliases") or []]}
        for s, v in topics.items()
    }
    theme_specs: dict[str, dict[str, Any]] = {
        s: {"title": title(s, v), "keywords": [str(k) for k in v.get("keywords") or []]}
        for s, v in themes.items()
    }
    _upsert(Topic, topic_specs)
    _upsert(Theme, theme_specs)
    if not derived:
        names_keep(Topic, list(Topic.objects.filter(slug__in=topic_specs)))
    names_keep(Theme, list(Theme.objects.filter(slug__in=theme_specs)))


@dataclass
class DerivedVocabulary:
    """The topics and themes an import derives from its notes (`vocabulary_derived`), stored a group of notes at
    a time, so that the import never holds the whole garden's vocabulary: they come out as if derived from all
    the changed notes at once. A topic that notes of several groups name keeps the title its first note gave it
    and gathers every group's aliases; a theme is its first folder's; a name left out as too long stays out.
    What it holds is the slugs seen so far, a few dozen bytes a name."""

    topics: set[str] = field(default_factory=set)
    themes: set[str] = field(default_factory=set)

    def store(self, vocabulary: Vocabulary) -> None:
        again = {t.slug: t for t in Topic.objects.filter(slug__in=self.topics & vocabulary.topics.keys())}
        topics: dict[str, dict[str, Any]] = {}
        for slug, spec in vocabulary.topics.items():
            if slug not in self.topics:
                topics[slug] = spec
            elif (stored := again.get(slug)) is not None:
                aliases = list(dict.fromkeys([*stored.aliases, *spec["aliases"]]))
                topics[slug] = {"title": stored.title, "aliases": aliases}
        themes = {slug: spec for slug, spec in vocabulary.themes.items() if slug not in self.themes}
        self.topics |= vocabulary.topics.keys()
        self.themes |= vocabulary.themes.keys()
        vocabulary_apply(Vocabulary(topics=topics, themes=themes), derived=True)


def notes_changed(notes: Sequence[ParsedArticle], *, history: bool = False) -> list[ParsedArticle]:
    """The notes whose text is not their article's current text. The folder is the truth: a note whose text
    went back to an earlier one (an undo, a `git revert`) is changed, and its text becomes current again, as a
    new revision (see `garden_import`). With `history` (an older copy of the garden, imported on purpose before
    the garden itself), a text imported before, current or superseded, is left as it is instead, so that the
    older copy never turns the clock back."""
    known: set[tuple[str, str]] = set()
    for start in range(0, len(notes), 1000):
        slugs = [note.slug for note in notes[start : start + 1000]]
        revisions = ArticleRevision.objects.filter(article__slug__in=slugs)
        if not history:
            revisions = revisions.filter(superseded=False)
        known.update(revisions.values_list("article__slug", "content_hash"))
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


def notes_write(group: Sequence[Pending], known: Known) -> int:
    """Store the new revisions of a group of notes, with their passages and links, in a few queries however many
    notes there are; the caller's transaction makes it all or nothing. How many of the articles are new."""
    now = timezone.now()
    slugs = [p.parsed.slug for p in group]
    stored = {a.slug: a for a in Article.objects.select_for_update().filter(slug__in=slugs)}
    articles = {slug: stored.get(slug) or Article(slug=slug) for slug in slugs}
    for item in group:
        article = articles[item.parsed.slug]
        article.title = item.parsed.title
        article.path = item.parsed.relative_path
        article.aliases = list(item.parsed.aliases)
        article.tags = list(item.parsed.tags)
        article.audiences = list(item.parsed.audiences or ())
        article.retired_at = None  # a note that left the garden and came back, edited
        article.withheld_at, article.withheld_reason = None, ""  # public and readable again
        article.updated_at = now
    Article.objects.bulk_update(
        stored.values(),
        [
            "title",
            "path",
            "aliases",
            "tags",
            "audiences",
            "retired_at",
            "withheld_at",
            "withheld_reason",
            "updated_at",
        ],
    )
    Article.objects.bulk_create([a for slug, a in articles.items() if slug not in stored])
    known.articles.update(
        {slug: a.pk for slug, a in articles.items()}
    )  # notes of the group link to each other
    ids = [a.pk for a in articles.values()]

    for relation, chosen in (("topics", known.topics), ("themes", known.themes)):
        through = getattr(Article, relation).through
        through.objects.filter(article_id__in=ids).delete()
        through.objects.bulk_create(
            through(article_id=articles[p.parsed.slug].pk, **{f"{relation[:-1]}_id": chosen[slug].pk})
            for p in group
            for slug in dict.fromkeys(getattr(p.parsed, relation))
            if slug in chosen  # a name too long for the vocabulary is no topic
        )

    revisions_write(
        [
            NewRevision(
                article=articles[p.parsed.slug],
                title=p.parsed.title,
                body=p.parsed.body,
                spans=p.spans,
                vectors=p.vectors,
                content_hash=p.parsed.content_hash,
                date=p.parsed.date,
                source_path=p.parsed.path,
                anchors=p.parsed.anchors or {},
                images=p.images,
                borrowed=p.parsed.borrowed,
                pages=p.parsed.pages,
                language=p.parsed.language,
            )
            for p in group
        ]
    )

    Link.objects.filter(source_id__in=ids).delete()
    Link.objects.bulk_create(
        Link(
            source_id=articles[p.parsed.slug].pk,
            target_slug=link.target_slug,
            text=link.text,
            target_id=known.articles.get(link.target_slug) if link.exists else None,
            written=list(link.written),
        )
        for p in group
        for link in p.links
    )
    # Red links elsewhere that named these notes' slugs point to them now.
    Link.objects.filter(target_slug__in=slugs, target__isnull=True).update(
        target_id=Subquery(Article.objects.filter(slug=OuterRef("target_slug")).values("pk")[:1])
    )
    return len(articles) - len(stored)
