"""Slugs told apart: two notes whose names make one slug (`A b.md` and `a-b.md`, or a front matter `slug`
written twice) both import, the second with a short suffix from its path."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from garden.formats.note import SLUG_MAX_CHARS, ParsedArticle
from garden.models import Article


def _suffixed(slug: str, place: str, taken: set[str]) -> str:
    digest = hashlib.sha256(place.encode()).hexdigest()
    for length in range(6, len(digest) + 1, 2):
        candidate = f"{slug[: SLUG_MAX_CHARS - length - 1]}-{digest[:length]}"
        if candidate not in taken:
            return candidate
    raise AssertionError("a sha256 digest names one path")


def unique_slugs(notes: Sequence[ParsedArticle]) -> list[ParsedArticle]:
    """The notes with unique slugs. Among notes sharing one, the note already stored under it (by its path)
    keeps it, else the first by path; each other gets `-` and a hash of its path, so its slug stays the same
    from one sync to the next, whichever notes come and go beside it."""
    by_slug: dict[str, list[ParsedArticle]] = defaultdict(list)
    for note in notes:
        by_slug[note.slug].append(note)
    clashes = {slug: group for slug, group in by_slug.items() if len(group) > 1}
    if not clashes:
        return list(notes)
    owners = dict(Article.objects.filter(slug__in=clashes).values_list("slug", "path"))
    taken = set(by_slug)
    renamed: dict[int, ParsedArticle] = {}
    for slug, group in clashes.items():
        group = sorted(group, key=lambda note: note.relative_path or note.path)
        keeper = next((note for note in group if note.relative_path == owners.get(slug)), group[0])
        for note in group:
            if note is not keeper:
                new = _suffixed(slug, note.relative_path or note.path, taken)
                taken.add(new)
                renamed[id(note)] = replace(note, slug=new)
    return [renamed.get(id(note), note) for note in notes]


def notes_clear_of_withheld(
    notes: Mapping[str, ParsedArticle], withheld: Collection[str]
) -> tuple[dict[str, ParsedArticle], list[tuple[ParsedArticle, str]]]:
    """The notes by slug, none at the address of a withheld article (withheld in this sync, or before and
    still): a public note that takes such a slug (a `slug:` line naming it) would take over its article, its
    old revisions and the answers quoting them. It is told apart as a clash is, by a hash of its path; the
    notes so moved, each with the slug it asked for, are returned to be reported."""
    before = dict(
        Article.objects.filter(slug__in=notes, withheld_at__isnull=False).values_list("slug", "path")
    )
    taken = set(notes) | set(withheld)
    kept: dict[str, ParsedArticle] = {}
    moved: list[tuple[ParsedArticle, str]] = []
    for slug, note in notes.items():
        owned = slug in before and before[slug] == note.relative_path  # its own article, public again
        if slug in withheld or (slug in before and not owned):
            new = _suffixed(slug, note.relative_path or note.path, taken)
            taken.add(new)
            note = replace(note, slug=new)
            moved.append((note, slug))
        kept[note.slug] = note
    return kept, moved
