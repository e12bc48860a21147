"""Resolving a note's links to articles as the editors that write them do (Obsidian first).

`[[Note]]` names a note by its file name, `[[Folder/Note]]` by the end of its path, `[[an alias]]` by an alias;
case does not matter, and when several notes answer, the one with the shortest path wins (then the first in
alphabetical order), as Obsidian resolves them. `[text](Folder/Note%20name.md)` is a path relative to the linking
note (else to the garden's root). A link that resolves to nothing is a red link. Pure: no database.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from garden.formats.note import WrittenLink, article_slug
from text.markup import slugify, written_key


@dataclass(frozen=True, slots=True)  # a sync holds one a note of the garden
class Note:
    """What a link can name: a note's slug, its path in the garden (without `.md`) and its aliases."""

    slug: str
    path: str
    aliases: tuple[str, ...] = ()


class LinkResolver:
    def __init__(self, notes: Iterable[Note]) -> None:
        self._by_path: dict[str, Note] = {}
        self._by_name: dict[str, list[Note]] = defaultdict(list)
        self._by_alias: dict[str, list[Note]] = defaultdict(list)
        for note in notes:
            path = note.path.lower()
            self._by_path[path] = note
            self._by_name[posixpath.basename(path)].append(note)
            for alias in note.aliases:
                self._by_alias[alias.strip().lower()].append(note)

    @staticmethod
    def _nearest(candidates: Iterable[Note]) -> Note | None:
        return min(candidates, key=lambda n: (n.path.count("/"), n.path.lower()), default=None)

    def wikilink(self, target: str) -> Note | None:
        """The note `[[target]]` names, or None (a red link)."""
        key = written_key(target)
        by_name = [
            note
            for note in self._by_name.get(posixpath.basename(key), [])
            if note.path.lower() == key or note.path.lower().endswith("/" + key)
        ]
        return self._nearest(by_name) or self._nearest(self._by_alias.get(key, []))

    def markdown_link(self, target: str, *, from_path: str) -> Note | None:
        """The note `[text](target)` names, written in the note at `from_path`, or None."""
        key = written_key(target)
        relative = posixpath.normpath(posixpath.join(posixpath.dirname(from_path.lower()), key))
        return self._by_path.get(relative) or self._by_path.get(posixpath.normpath(key)) or self.wikilink(key)

    def resolve(self, link: WrittenLink, *, from_path: str) -> Note | None:
        if link.markdown:
            return self.markdown_link(link.target, from_path=from_path)
        return self.wikilink(link.target)


def red_link_slug(link: WrittenLink) -> str:
    """Where a link to a missing note points: the slug such a note would have at the garden's root."""
    name = posixpath.basename(written_key(link.target))
    return article_slug(name, name) if slugify(name) else "missing"
