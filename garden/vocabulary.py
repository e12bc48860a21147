"""A garden's topics and themes: from its optional `_garden.yaml`, else from its notes.

Without that file, each tag is a topic (`#bees/swarming` is matched by "bees/swarming" or "swarming"), and so is
each note, under its title with its aliases and file name; each top-level folder is a theme. So a question that
names a note, an alias or a tag finds it, with no file to write. Pure: no database.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from garden.formats.note import ArticleFileError, ParsedArticle
from garden.name_limits import NAME_SLUG_LIMIT as NAME_SLUG_LIMIT
from garden.name_limits import NAME_TITLE_LIMIT as NAME_TITLE_LIMIT
from text.markup import slugify

GARDEN_FILE = "_garden.yaml"


def fits(slug: str, title: str) -> bool:
    return 0 < len(slug) <= NAME_SLUG_LIMIT and len(title) <= NAME_TITLE_LIMIT


@dataclass(frozen=True)
class Vocabulary:
    """Topics and themes defined in a garden's `_garden.yaml`."""

    topics: dict[str, dict[str, Any]] = field(default_factory=dict)
    themes: dict[str, dict[str, Any]] = field(default_factory=dict)


def read_vocabulary(folder: Path) -> Vocabulary:
    """Topic titles and aliases, theme titles and keywords, from the folder's `_garden.yaml` if it has one."""
    path = folder / GARDEN_FILE
    if not path.is_file():
        return Vocabulary()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise ArticleFileError(f"{path}: not valid YAML ({error.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise ArticleFileError(f"{path}: must be a mapping with 'topics' and 'themes'")
    return Vocabulary(topics=dict(data.get("topics") or {}), themes=dict(data.get("themes") or {}))


def vocabulary_derived(
    notes: Iterable[ParsedArticle],
) -> tuple[Vocabulary, dict[str, tuple[list[str], list[str]]]]:
    """Topics and themes derived from notes, and each note's (topic slugs, theme slugs) by its slug."""
    topics: dict[str, dict[str, Any]] = {}
    themes: dict[str, dict[str, Any]] = {}
    placed: dict[str, tuple[list[str], list[str]]] = {}

    def topic(title: str, aliases: Iterable[str]) -> str:
        slug = slugify(title)
        spec = topics.setdefault(slug, {"title": title, "aliases": []})
        spec["aliases"] = list(
            dict.fromkeys([*spec["aliases"], *(a for a in aliases if a.lower() != title.lower())])
        )
        return slug

    for note in notes:
        # A paged note's place keeps its file's suffix (`garden.formats.registry.suffix_kept`, which this module,
        # below answering, may not import): its file's name is its place's without the suffix.
        names = note.names or [file_name(note.relative_path or note.slug, keeps_suffix=bool(note.pages))]
        note_topics = [
            topic(title, aliases)
            for title, aliases in topics_named(note.title, note.aliases, note.tags, names)
        ]
        note_themes = []
        folders = PurePosixPath(note.relative_path).parts[:-1] if note.folder_is_theme else ()
        if folders:
            slug = slugify(folders[0])
            themes.setdefault(slug, {"title": folders[0], "keywords": [folders[0].lower()]})
            note_themes.append(slug)
        placed[note.slug] = ([t for t in dict.fromkeys(note_topics) if t], note_themes)
    return Vocabulary(topics=topics, themes=themes), placed


def topics_named(
    title: str, aliases: Iterable[str], tags: Iterable[str], names: Iterable[str]
) -> list[tuple[str, list[str]]]:
    """The topics a note names, each as (title, aliases): each of its tags, and its title with its aliases and
    other `names` (its file name, or a Logseq page's title). The one rule of both `vocabulary_derived` and the
    re-derivation of a topic from its live notes (`garden.sync.topic_names`)."""
    named = [(tag, [tag.rsplit("/", 1)[-1]] if "/" in tag else []) for tag in tags]
    named.append((title, [*aliases, *names]))
    return named


def file_name(relative_path: str, *, keeps_suffix: bool) -> str:
    """The name a note's file gives it, by which a question may name it: without its suffix when its place
    (`relative_path`) keeps it, as a PDF's does."""
    name = PurePosixPath(relative_path).name
    return PurePosixPath(name).stem if keeps_suffix else name


def has_vocabulary_file(folder: Path) -> bool:
    return (folder / GARDEN_FILE).is_file()
