"""Syncing a garden folder into the database (`import_garden`): new notes become articles, edited ones new
revisions, and links, topics and themes follow. Each note is written in its own transaction after its chunks are
embedded, so one bad note costs nothing else and an interrupted import resumes where it stopped.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from garden import embeddings
from garden.chunking import chunk_spans
from garden.importer import ArticleFileError, ParsedArticle, article_files, parse_article_file, slugify
from garden.links import LinkResolver, Note, red_link_slug
from garden.models import Article, ArticleRevision, Chunk, Link, Theme, Topic
from garden.services import embedding_input, revision_store
from garden.vocabulary import Vocabulary, has_vocabulary_file, read_vocabulary, vocabulary_derived

logger = logging.getLogger(__name__)

Progress = Callable[[int], None]


@dataclass
class ImportReport:
    created: int = 0
    revised: int = 0
    unchanged: int = 0
    chunks: int = 0
    embed_seconds: float = 0.0
    seconds: float = 0.0
    embedded: int = 0  # chunks embedded (an edit reuses the vectors of the passages it left alone)
    moved: int = 0  # notes moved or renamed, which kept their article
    retired: int = 0  # notes gone from the garden
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


def _changed(notes: Sequence[ParsedArticle]) -> list[ParsedArticle]:
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
class _Known:
    """What a group of notes refers to, read once for the group: topics, themes and link targets by slug."""

    topics: dict[str, Topic]
    themes: dict[str, Theme]
    articles: dict[str, int]

    @classmethod
    def of(cls, group: Sequence[_Pending]) -> _Known:
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
def _article_write(pending: _Pending, known: _Known) -> bool:
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
        article, parsed.title, parsed.body, parsed.date, parsed.path, parsed.content_hash, parsed.anchors
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


GROUP_CHUNKS = 256  # chunks embedded, then written, at a time: an interrupted import loses at most one group


def _notes_read(folder: Path, root: Path, report: ImportReport) -> tuple[dict[str, ParsedArticle], set[str]]:
    """The folder's notes by slug, and the slugs of notes present but not imported this time (a note that
    failed or is private), which must not be mistaken for deleted ones."""
    notes: dict[str, ParsedArticle] = {}
    held_back: set[str] = set()
    for path in article_files(folder):
        try:
            parsed = parse_article_file(path.resolve(), root=root if folder.is_dir() else None)
        except ArticleFileError as error:
            report.failures.append((str(path), str(error)))
            held_back.add(
                slugify(path.relative_to(folder).with_suffix("").as_posix() if folder.is_dir() else path.stem)
            )
            continue
        if parsed.private:
            report.private += 1
            continue
        if parsed.slug in notes:
            other = notes[parsed.slug].path
            report.failures.append((str(path), f"its slug '{parsed.slug}' is already that of {other}"))
            continue
        notes[parsed.slug] = parsed
    return notes, held_back


def _garden_articles(root: Path) -> QuerySet[Article]:
    """The live articles whose current revision came from a note under `root`."""
    return Article.objects.filter(
        retired_at__isnull=True,
        revisions__superseded=False,
        revisions__source_path__startswith=f"{root}{os.sep}",
    )


def _renames_follow(root: Path, notes: dict[str, ParsedArticle]) -> int:
    """A note that moved or was renamed (its text unchanged) keeps its article, history and backlinks."""
    known = set(Article.objects.filter(slug__in=notes).values_list("slug", flat=True))
    arrivals = {p.content_hash: p for slug, p in notes.items() if slug not in known}
    if not arrivals:
        return 0
    moved = 0
    for article in _garden_articles(root).exclude(slug__in=notes):
        current = article.revisions.filter(superseded=False).first()
        arrival = arrivals.pop(current.content_hash, None) if current else None
        if current is None or arrival is None:
            continue
        with transaction.atomic():
            Link.objects.filter(target=article).update(target_slug=arrival.slug)
            article.slug, article.path = arrival.slug, arrival.relative_path
            article.save(update_fields=["slug", "path", "updated_at"])
            ArticleRevision.objects.filter(pk=current.pk).update(source_path=arrival.path)
        moved += 1
    return moved


def _retire_missing(root: Path, present: set[str]) -> int:
    """Articles whose note is gone from the garden are retired: no longer retrieved or listed, while their
    history, and the answers that cited them, stay."""
    retired = 0
    for article in _garden_articles(root).exclude(slug__in=present):
        with transaction.atomic():
            Article.objects.filter(pk=article.pk).update(retired_at=timezone.now())
            Chunk.objects.filter(article=article, is_current=True).update(is_current=False)
        retired += 1
    return retired


def _restore_returned(slugs: Sequence[str]) -> None:
    """A retired note that is back, unchanged, is live again."""
    for article in Article.objects.filter(slug__in=slugs, retired_at__isnull=False):
        with transaction.atomic():
            Article.objects.filter(pk=article.pk).update(retired_at=None)
            Chunk.objects.filter(article=article, revision__superseded=False).update(is_current=True)


def _previous_vectors(pending: Sequence[_Pending]) -> dict[tuple[str, str], list[float]]:
    """The vectors of the current chunks of the notes being revised, by (slug, embedding input): an edit
    re-embeds only the passages it changed."""
    rows = Chunk.objects.filter(
        is_current=True, article__slug__in=[p.parsed.slug for p in pending]
    ).values_list("article__slug", "revision__title", "text", "embedding")
    return {(slug, embedding_input(title, text)): list(vector) for slug, title, text, vector in rows}


@dataclass
class _Embedding:
    """One group's vectors: those its notes' unchanged passages already have, and the texts still to encode."""

    group: Sequence[_Pending]
    vectors: list[list[float]]
    missing: list[int]  # positions still to encode, shortest text first
    texts: list[str]

    @classmethod
    def plan(cls, group: Sequence[_Pending]) -> _Embedding:
        keys = [
            (p.parsed.slug, embedding_input(p.parsed.title, p.parsed.body[a:b]))
            for p in group
            for a, b in p.spans
        ]
        known = _previous_vectors(group)
        vectors = [known.get(key, []) for key in keys]
        missing = sorted((i for i, v in enumerate(vectors) if not v), key=lambda i: len(keys[i][1]))
        return cls(group, vectors, missing, [keys[i][1] for i in missing])

    def fill(self, encoded: list[list[float]]) -> None:
        for i, vector in zip(self.missing, encoded, strict=True):
            self.vectors[i] = vector
        offset = 0
        for item in self.group:
            item.vectors = self.vectors[offset : offset + len(item.spans)]
            offset += len(item.spans)


def _encode(texts: list[str]) -> tuple[list[list[float]], float]:
    """Embed texts sorted by length, in batches (a batch is padded to its longest text: mixed lengths cost
    twice the time); the vectors and the seconds it took."""
    began = time.perf_counter()
    vectors: list[list[float]] = []
    for start in range(0, len(texts), embeddings.BATCH_SIZE):
        vectors += embeddings.embed(texts[start : start + embeddings.BATCH_SIZE]).tolist()
    return vectors, time.perf_counter() - began


def _groups_write(
    groups: Sequence[Sequence[_Pending]], report: ImportReport, on_progress: Progress | None
) -> None:
    """Embed and write the groups in turn, the next group's encoding (in a thread: torch leaves Python's lock)
    overlapping this group's database writes."""
    if not groups:
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed") as encoder:
        planned = _Embedding.plan(groups[0])
        encoding = encoder.submit(_encode, planned.texts)
        for number, group in enumerate(groups):
            encoded, seconds = encoding.result()
            planned.fill(encoded)
            report.embedded += len(encoded)
            report.embed_seconds += seconds
            if on_progress:
                on_progress(len(encoded))
            if number + 1 < len(groups):
                following = _Embedding.plan(groups[number + 1])
                encoding = encoder.submit(_encode, following.texts)
            known = _Known.of(group)
            for item in group:
                created = _article_write(item, known)
                report.created += created
                report.revised += not created
                report.chunks += len(item.spans)
            if number + 1 < len(groups):
                planned = following


def _groups(pending: Sequence[_Pending]) -> list[list[_Pending]]:
    groups: list[list[_Pending]] = [[]]
    size = 0
    for item in pending:
        if size >= GROUP_CHUNKS:
            groups.append([])
            size = 0
        groups[-1].append(item)
        size += len(item.spans)
    return [group for group in groups if group]


def _folder_import(
    folder: Path, report: ImportReport, on_start: Callable[[int], None] | None, on_progress: Progress | None
) -> None:
    root = folder.resolve()
    try:
        vocabulary_apply(read_vocabulary(folder))
    except ArticleFileError as error:
        report.failures.append((str(folder), str(error)))
    notes, held_back = _notes_read(folder, root, report)
    if folder.is_dir():
        report.moved += _renames_follow(root, notes)
    resolver = _resolver(list(notes.values()))
    changed = _changed(list(notes.values()))
    report.unchanged += len(notes) - len(changed)
    _restore_returned([slug for slug in notes if slug not in {p.slug for p in changed}])
    if folder.is_dir() and not has_vocabulary_file(folder) and changed:
        vocabulary, placed = vocabulary_derived(changed)
        vocabulary_apply(vocabulary)
        changed = [
            replace(p, topics=(*p.topics, *placed[p.slug][0]), themes=(*p.themes, *placed[p.slug][1]))
            for p in changed
        ]
    pending = [
        _Pending(p, [(s.start, s.end) for s in chunk_spans(p.body)], links=_links_resolve(p, resolver))
        for p in changed
    ]
    if on_start:
        on_start(sum(len(p.spans) for p in pending))
    _groups_write(_groups(pending), report, on_progress)
    _red_links_resolve(resolver)
    if folder.is_dir():
        report.retired += _retire_missing(root, present=set(notes) | held_back)


def garden_import(
    folders: Sequence[Path],
    *,
    on_start: Callable[[int], None] | None = None,
    on_progress: Progress | None = None,
) -> ImportReport:
    """Sync folders of Markdown notes (or single notes) in order: new notes become articles, edited ones new
    revisions (re-embedding only the passages that changed), moved or renamed ones keep their article, and
    notes gone from a folder are retired. A note whose exact text was imported before is skipped.

    A file that cannot be imported is reported with its reason and the rest still import. Each article is
    written in its own transaction, so an interrupted import never leaves a half-written article.
    """
    report = ImportReport()
    began = time.perf_counter()
    for folder in folders:
        _folder_import(folder, report, on_start, on_progress)
    report.red_links = Link.objects.filter(target__isnull=True, source__retired_at__isnull=True).count()
    report.seconds = time.perf_counter() - began
    return report


def _garden_file(change: object, path: str) -> bool:
    return path.endswith((".md", ".gardenignore", "_garden.yaml"))


def garden_watch(
    folders: Sequence[Path],
    on_report: Callable[[ImportReport], None],
    *,
    stop: threading.Event | None = None,
) -> None:
    """Sync the folders each time their notes change (batched while an editor saves), until `stop` is set
    or the process is interrupted. A sync that fails is reported and the watch goes on."""
    import watchfiles

    try:
        for _changes in watchfiles.watch(*folders, watch_filter=_garden_file, stop_event=stop, debounce=800):
            try:
                on_report(garden_import(folders))
            except DatabaseError as error:
                logger.error("the garden could not be synced: %s", error)
    finally:
        connection.close()  # the watch may run in a thread of its own, whose connection nobody else closes


SYNC_LOCK = 7402  # advisory lock: one scheduled sync at a time, whichever worker beat sent it to


def garden_sync_configured() -> ImportReport | None:
    """Sync the garden at GARDEN_PATH (Celery beat's schedule); None when none is set or a sync is running."""
    if not settings.GARDEN_PATH:
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [SYNC_LOCK])
        if not cursor.fetchone()[0]:
            logger.info("a garden sync is already running; this one steps aside")
            return None
        try:
            report = garden_import([Path(settings.GARDEN_PATH)])
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [SYNC_LOCK])
    logger.info(
        "garden synced: %d new, %d revised, %d unchanged, %d moved, %d retired, %d failed",
        report.created,
        report.revised,
        report.unchanged,
        report.moved,
        report.retired,
        len(report.failures),
    )
    return report
