"""Notes that move, leave, turn private or come back: a moved note keeps its article, a gone one is retired
(history kept), a private or unreadable one is withheld (nothing of it shown), one that returns is live again.

Which articles belong to a garden is recorded on the article (`Article.garden`), not read from its revisions'
file paths: an admin edit or a garden moved to another folder does not take a note out of its garden.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path, PurePosixPath

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from garden.formats.note import ParsedArticle
from garden.formats.registry import file_hash, place_of
from garden.models import Article, ArticleRevision, Link, Passage
from garden.sync.topic_names import topics_rederive

PRIVATE = "made private"
UNREADABLE = "cannot be imported: {reason}"


def gardens_synced(root: Path, present: Collection[str]) -> set[str]:
    """The gardens a sync of `root` stands for: `root`, and any folder the notes found there were imported
    from before and which now holds no notes (the garden was moved or mounted elsewhere), so notes left behind
    there are not kept live. A folder that still holds notes is another garden that shares a note's name."""
    others = set(
        Article.objects.filter(slug__in=present)
        .exclude(garden__in=["", str(root)])
        .values_list("garden", flat=True)
    )
    return {str(root), *(other for other in others if not _holds_notes(Path(other)))}


def _holds_notes(folder: Path) -> bool:
    try:
        return folder.is_dir() and next(folder.rglob("*.md"), None) is not None
    except OSError:
        return False


def articles_in_garden(root: Path, roots: Collection[str] = ()) -> QuerySet[Article]:
    """The articles of the garden at `root` (and `roots`) that are not retired, withheld ones included.
    Articles imported before `Article.garden` was recorded are found by their revisions' file paths."""
    return Article.objects.filter(
        Q(garden__in={str(root), *roots})
        | Q(garden="", revisions__source_path__startswith=f"{root}{os.sep}"),
        retired_at__isnull=True,
    ).distinct()


def articles_adopt(root: Path, present: Collection[str]) -> None:
    """Record that the notes found in this sync belong to the garden at `root`."""
    Article.objects.filter(slug__in=present).exclude(garden=str(root)).update(garden=str(root))


def articles_move(
    root: Path,
    notes: dict[str, ParsedArticle],
    roots: Collection[str] = (),
    renamed: Mapping[str, str] | None = None,
) -> int:
    """A note that moved or was renamed (its text unchanged) keeps its article, history and backlinks; so does
    one named in `renamed` (its place -> the place it was renamed from: git's rename detection), edited or not."""
    known = set(Article.objects.filter(slug__in=notes).values_list("slug", flat=True))
    arrivals = {p.content_hash: p for slug, p in notes.items() if slug not in known}
    if not arrivals:
        return 0
    origins = {
        before: arrival
        for arrival in arrivals.values()
        if (before := (renamed or {}).get(arrival.relative_path or "")) is not None
    }
    moved = 0
    for article in articles_in_garden(root, roots).exclude(slug__in=notes):
        current = article.current_revision
        arrival = origins.pop(article.path, None) if current else None
        if arrival is not None:
            arrivals.pop(arrival.content_hash, None)
        elif current is not None:
            arrival = arrivals.pop(current.content_hash, None)
        if current is None or arrival is None or arrival.slug in known:
            continue
        known.add(arrival.slug)
        with transaction.atomic():
            Link.objects.filter(target=article).update(target_slug=arrival.slug)
            article.slug, article.path = arrival.slug, arrival.relative_path
            article.save(update_fields=["slug", "path", "updated_at"])
            ArticleRevision.objects.filter(pk=current.pk).update(source_path=arrival.path)
        moved += 1
    return moved


def articles_unread(
    root: Path, unread: Mapping[str, tuple[str, str]], public: Collection[str]
) -> dict[str, str]:
    """The articles of notes present but not imported this time (`unread`: their place in the garden -> the slug
    their place gives, and why), slug -> why. An article is found by where its note lives, not by its address:
    a note whose slug came from a `slug:` line, a clash's suffix or a Logseq title is withheld under the slug it
    was imported with. A note never imported under its place is withheld under the slug its place gives, unless
    a public note of this sync has that slug (the article is that note's: the unread one has none)."""
    stored: dict[str, str] = {}
    for path, slug, garden in Article.objects.filter(garden__in=[str(root), ""], path__in=unread).values_list(
        "path", "slug", "garden"
    ):
        if garden or path not in stored:  # an article of this garden before one imported before gardens were
            stored[path] = slug
    found: dict[str, str] = {}
    for place, (slug, reason) in unread.items():
        if place in stored:
            found[stored[place]] = reason
        elif slug not in public:
            found[slug] = reason
    return found


def articles_made_private(
    root: Path, roots: Collection[str], present: Collection[str], private_files: Collection[Path]
) -> dict[str, str]:
    """Articles whose note is gone from its place but now sits in a private place (moved into a dot-folder or
    a folder `.gardenignore` names): slug -> reason. Found by the note's text, or else its file name."""
    gone = list(articles_in_garden(root, roots).exclude(slug__in=present).prefetch_related("revisions"))
    if not gone or not private_files:
        return {}  # the private files are read only when a note has gone from its place
    # As its format places and hashes it: a PDF's article keeps its suffix in its path (`Papers/Hive
    # study.pdf`), and its hash is of its bytes.
    names = {PurePosixPath(place_of(Path(path.name))).name.lower() for path in private_files}
    hashes: set[str] = set()
    for path in private_files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        hashes.add(file_hash(path, data))
    hidden: dict[str, str] = {}
    for article in gone:
        current = next((r for r in article.revisions.all() if not r.superseded), None)
        stem = Path(article.path).name.lower() if article.path else ""
        if (current is not None and current.content_hash in hashes) or (stem and stem in names):
            hidden[article.slug] = PRIVATE
    return hidden


def articles_missing_count(
    root: Path, roots: Collection[str], kept: Collection[str], arrivals: Collection[str]
) -> int:
    """How many of the garden's articles a sync would retire: those whose note is not among `kept`, less
    those whose text arrived under another name (`arrivals`: content hashes), which moved."""
    moved = ArticleRevision.objects.filter(
        article=OuterRef("pk"), superseded=False, content_hash__in=arrivals
    )
    return articles_in_garden(root, roots).exclude(slug__in=kept).exclude(Exists(moved)).count()


def articles_retire(root: Path, present: Collection[str], roots: Collection[str] = ()) -> int:
    """Articles whose note is gone from the garden are retired: no longer retrieved or listed, while their
    history, and the answers that cited them, stay."""
    retired = []
    for article in articles_in_garden(root, roots).exclude(slug__in=present):
        with transaction.atomic():
            Article.objects.filter(pk=article.pk).update(retired_at=timezone.now())
            Passage.objects.filter(article=article, is_current=True).update(is_current=False)
        retired.append(article.pk)
    topics_rederive(retired)  # its names leave the topics it shared
    return len(retired)


def articles_withhold(reasons: Mapping[str, str]) -> int:
    """Withhold the articles of these slugs (slug -> why): readers see none of their text, on any page, until
    their note is public and readable again. Returns how many were newly withheld."""
    newly = []
    now = timezone.now()
    for article in Article.objects.filter(slug__in=reasons):
        reason = reasons[article.slug][:500]
        if article.withheld_at is not None and article.withheld_reason == reason:
            continue  # withheld already, for the same reason: a sync of a garden with private notes writes nothing
        with transaction.atomic():
            if article.withheld_at is None:
                newly.append(article.pk)
            Article.objects.filter(pk=article.pk).update(
                withheld_at=article.withheld_at or now, withheld_reason=reason
            )
            Passage.objects.filter(article=article, is_current=True).update(is_current=False)
    topics_rederive(newly)  # its names leave the topics it shared
    return len(newly)


def articles_restore(slugs: Collection[str]) -> None:
    """A retired or withheld note that is back, unchanged, public and readable, is live again."""
    returning = Article.objects.filter(slug__in=slugs).filter(
        Q(retired_at__isnull=False) | Q(withheld_at__isnull=False)
    )
    back = []
    for article in returning:
        with transaction.atomic():
            Article.objects.filter(pk=article.pk).update(
                retired_at=None, withheld_at=None, withheld_reason=""
            )
            Passage.objects.filter(article=article, revision__superseded=False).update(is_current=True)
        back.append(article.pk)
    topics_rederive(back)  # and its names come back to its topics
