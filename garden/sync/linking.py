"""A note's links in the database: resolved once per target, and red links that turn into links when their
note arrives."""

from __future__ import annotations

from dataclasses import dataclass

from garden.formats.note import ParsedArticle
from garden.models import Article, Link
from garden.readers import ALL_AUDIENCES
from garden.sync.links import LinkResolver, Note, red_link_slug

RED_LINKS_READ = 2000  # red links read at a time


@dataclass(frozen=True)
class ResolvedLink:
    target_slug: str
    exists: bool
    text: str
    written: tuple[str, ...]


def links_resolve(parsed: ParsedArticle, resolver: LinkResolver) -> list[ResolvedLink]:
    """The note's links, one per target however often and however it is written."""
    by_target: dict[str, tuple[bool, str, list[str]]] = {}
    for link in parsed.links:
        note = resolver.resolve(link, from_path=parsed.relative_path or parsed.slug)
        slug = note.slug if note is not None else red_link_slug(link)
        written = by_target.setdefault(slug, (note is not None, link.text, []))[2]
        if link.key not in written:
            written.append(link.key)
    return [
        ResolvedLink(slug, exists, text, tuple(written))
        for slug, (exists, text, written) in by_target.items()
    ]


def link_resolver(parsed: list[ParsedArticle]) -> LinkResolver:
    """Every note a link may name: the garden's readable articles (a withheld one is a red link), with this
    import's notes as they are now. Of every audience: whether a reader sees a link is their page's to say."""
    notes = {
        slug: Note(slug, path or slug, tuple(aliases))
        for slug, path, aliases in Article.objects.readable(ALL_AUDIENCES).values_list(
            "slug", "path", "aliases"
        )
    }
    notes.update({p.slug: Note(p.slug, p.relative_path or p.slug, (*p.aliases, *p.names)) for p in parsed})
    return LinkResolver(notes.values())


def red_links_resolve(resolver: LinkResolver) -> None:
    """Red links whose note has now arrived point to it."""
    # Streamed, three columns a row: a garden's red links can be one a note.
    red = Link.objects.filter(target__isnull=True).values_list("pk", "source_id", "written")
    for pk, source_id, written in red.iterator(chunk_size=RED_LINKS_READ):
        note = next(filter(None, (resolver.wikilink(key) for key in written)), None)
        if note is None:
            continue
        target = Article.objects.readable(ALL_AUDIENCES).filter(slug=note.slug).first()
        if target is not None and not Link.objects.filter(source=source_id, target_slug=note.slug).exists():
            Link.objects.filter(pk=pk).update(target=target, target_slug=note.slug)
