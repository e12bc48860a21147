"""Syncing a garden folder into the database (`import_garden`): new notes become articles, edited ones new
revisions, and links, topics and themes follow. Each note is written in its own transaction after its chunks are
embedded, so one bad note costs nothing else and an interrupted import resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from django.db import transaction

from garden import embeddings
from garden.chunking import chunk_spans
from garden.importer import ArticleFileError, ParsedArticle, article_files, parse_article_file, slugify
from garden.links import LinkResolver, Note, red_link_slug
from garden.models import Article, ArticleRevision, Chunk, Link, Theme, Topic
from garden.services import embedding_input, revision_store
from garden.vocabulary import Vocabulary, has_vocabulary_file, read_vocabulary, vocabulary_derived

Progress = Callable[[int], None]


@dataclass
class ImportReport:
    created: int = 0
    revised: int = 0
    unchanged: int = 0
    chunks: int = 0
    embed_seconds: float = 0.0
    seconds: float = 0.0
    private: int = 0  # notes left out by their front matter (publish: false, draft: true, private: true)
    red_links: int = 0  # links, across the garden, to notes it does not have
    failures: list[tuple[str, str]] = field(default_factory=list)

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class _ResolvedLink:
    target_slug: str
    exists: bool
    text: str
    written: tuple[str, ...]


@dataclass
class _Pending:
    parsed: ParsedArticle
    spans: list[tuple[int, int]]
    vectors: list[list[float]] = field(default_factory=list)
    links: list[_ResolvedLink] = field(default_factory=list)


def _links_resolve(parsed: ParsedArticle, resolver: LinkResolver) -> list[_ResolvedLink]:
    """The note's links, one per target however often and however it is written."""
    by_target: dict[str, tuple[bool, str, list[str]]] = {}
    for link in parsed.links:
        note = resolver.resolve(link, from_path=parsed.relative_path or parsed.slug)
        slug = note.slug if note is not None else red_link_slug(link)
        written = by_target.setdefault(slug, (note is not None, link.text, []))[2]
        if link.key not in written:
            written.append(link.key)
    return [
        _ResolvedLink(slug, exists, text, tuple(written))
        for slug, (exists, text, written) in by_target.items()
    ]


def _resolver(parsed: list[ParsedArticle]) -> LinkResolver:
    """Every note a link may name: the garden's articles, with this import's notes as they are now."""
    notes = {
        slug: Note(slug, path or slug, tuple(aliases))
        for slug, path, aliases in Article.objects.values_list("slug", "path", "aliases")
    }
    notes.update({p.slug: Note(p.slug, p.relative_path or p.slug, p.aliases) for p in parsed})
    return LinkResolver(notes.values())


def _red_links_resolve(resolver: LinkResolver) -> None:
    """Red links whose note has now arrived point to it."""
    for link in Link.objects.filter(target__isnull=True):
        note = next(filter(None, (resolver.wikilink(key) for key in link.written)), None)
        if note is None:
            continue
        target = Article.objects.filter(slug=note.slug).first()
        if (
            target is not None
            and not Link.objects.filter(source=link.source_id, target_slug=note.slug).exists()
        ):
            Link.objects.filter(pk=link.pk).update(target=target, target_slug=note.slug)


def vocabulary_apply(vocabulary: Vocabulary) -> None:
    for slug, spec in vocabulary.topics.items():
        spec = spec or {}
        Topic.objects.update_or_create(
            slug=slugify(slug),
            defaults={
                "title": spec.get("title") or slug.replace("-", " ").title(),
                "aliases": [str(a) for a in spec.get("aliases") or []],
            },
        )
    for slug, spec in vocabulary.themes.items():
        spec = spec or {}
        Theme.objects.update_or_create(
            slug=slugify(slug),
            defaults={
                "title": spec.get("title") or slug.replace("-", " ").title(),
                "keywords": [str(k) for k in spec.get("keywords") or []],
            },
        )


def _needs_revision(parsed: ParsedArticle) -> bool:
    # A text imported before (current or superseded) is not imported again, so re-importing an older
    # snapshot after a newer one never turns the clock back.
    return not ArticleRevision.objects.filter(
        article__slug=parsed.slug, content_hash=parsed.content_hash
    ).exists()


@transaction.atomic
def _article_write(pending: _Pending) -> bool:
    """Store one article's new revision with its chunks and links, all or nothing. True when it is new."""
    parsed = pending.parsed
    article, created = Article.objects.get_or_create(slug=parsed.slug, defaults={"title": parsed.title})
    article.title = parsed.title
    article.path = parsed.relative_path
    article.aliases = list(parsed.aliases)
    article.tags = list(parsed.tags)
    article.save()
    topics = [
        Topic.objects.get_or_create(slug=s, defaults={"title": s.replace("-", " ").title()})[0]
        for s in parsed.topics
    ]
    themes = [
        Theme.objects.get_or_create(slug=s, defaults={"title": s.replace("-", " ").title()})[0]
        for s in parsed.themes
    ]
    article.topics.set(topics)
    article.themes.set(themes)
    revision = revision_store(
        article, parsed.title, parsed.body, parsed.date, parsed.path, parsed.content_hash
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
            target=Article.objects.filter(slug=link.target_slug).first() if link.exists else None,
            written=list(link.written),
        )
        for link in pending.links
    )
    Link.objects.filter(target_slug=article.slug, target__isnull=True).update(target=article)
    return created


def garden_import(
    folders: Sequence[Path],
    *,
    on_start: Callable[[int], None] | None = None,
    on_progress: Progress | None = None,
) -> ImportReport:
    """Import folders of Markdown articles in order; a changed article gets a new revision.

    Files whose exact text was imported before (current or superseded revision) are skipped. A file that cannot be imported is reported with its
    reason and the rest still import. Each article is written in its own transaction, so an interrupted
    import never leaves a half-written article.
    """
    report = ImportReport()
    began = time.perf_counter()
    for folder in folders:
        try:
            vocabulary_apply(read_vocabulary(folder))
        except ArticleFileError as error:
            report.failures.append((str(folder), str(error)))
        notes: dict[str, ParsedArticle] = {}
        for path in article_files(folder):
            try:
                parsed = parse_article_file(path, root=folder if folder.is_dir() else None)
            except ArticleFileError as error:
                report.failures.append((str(path), str(error)))
                continue
            if parsed.private:
                report.private += 1
                continue
            if parsed.slug in notes:
                other = notes[parsed.slug].path
                report.failures.append((str(path), f"its slug '{parsed.slug}' is already that of {other}"))
                continue
            notes[parsed.slug] = parsed
        resolver = _resolver(list(notes.values()))
        pending: list[_Pending] = []
        changed = [parsed for parsed in notes.values() if _needs_revision(parsed)]
        report.unchanged += len(notes) - len(changed)
        if folder.is_dir() and not has_vocabulary_file(folder) and changed:
            vocabulary, placed = vocabulary_derived(changed)
            vocabulary_apply(vocabulary)
            changed = [
                replace(p, topics=(*p.topics, *placed[p.slug][0]), themes=(*p.themes, *placed[p.slug][1]))
                for p in changed
            ]
        for parsed in changed:
            spans = [(s.start, s.end) for s in chunk_spans(parsed.body)]
            pending.append(_Pending(parsed, spans, links=_links_resolve(parsed, resolver)))
        texts = [embedding_input(p.parsed.title, p.parsed.body[a:b]) for p in pending for a, b in p.spans]
        if on_start:
            on_start(len(texts))
        embed_began = time.perf_counter()
        vectors: list[list[float]] = [[] for _ in texts]
        # Batches of texts of like length: a batch is padded to its longest text, so mixed lengths cost twice
        # the time (the sample garden: 12 s against 7 s).
        by_length = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(by_length), embeddings.BATCH_SIZE):
            batch = by_length[start : start + embeddings.BATCH_SIZE]
            for i, vector in zip(batch, embeddings.embed([texts[i] for i in batch]).tolist(), strict=True):
                vectors[i] = vector
            if on_progress:
                on_progress(len(batch))
        report.embed_seconds += time.perf_counter() - embed_began
        offset = 0
        for item in pending:
            item.vectors = vectors[offset : offset + len(item.spans)]
            offset += len(item.spans)
            if _article_write(item):
                report.created += 1
            else:
                report.revised += 1
            report.chunks += len(item.spans)
        _red_links_resolve(resolver)
    report.red_links = Link.objects.filter(target__isnull=True).count()
    report.seconds = time.perf_counter() - began
    return report
