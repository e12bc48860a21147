"""The Logseq format as the registry knows it (`FORMAT`): a graph opened for one sync (`LogseqContext`), its
pages read, and resolved once all are read.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings

from garden.formats import markdown
from garden.formats.gardening import editor_markup_removed
from garden.formats.logseq.blocks import Block, page_blocks
from garden.formats.logseq.graph import CONFIG, Graph, graph_of
from garden.formats.logseq.resolution import pages_resolved
from garden.formats.markdown import (
    MARKDOWN_SUFFIX,
    EditorPage,
    parse_article_file,
    written_links,
)
from garden.formats.note import ParsedArticle, article_slug
from garden.formats.protocol import GardenFiles, ImportedTitle

# Logseq's own copies of pages, in its `logseq/` folder: a copy saved before a page was made private would
# publish what the page no longer does.
LOGSEQ_COPIES = frozenset({"bak", "version-files"})


class _PagesRead:
    """A graph's rules for reading its pages (`Graph.page_read`), keeping the blocks of each page that others
    may reference, by its place: they are the graph's to resolve, not the note's."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.blocks: dict[str, dict[str, Block]] = {}

    def page_read(
        self, meta: dict[str, Any], properties: dict[str, Any], body: str, place: str
    ) -> EditorPage:
        blocks = page_blocks(body)
        if blocks:
            self.blocks[place] = blocks
        return self.graph.page_read(meta, properties, body, place)


class LogseqContext:
    """A Logseq graph for one sync, its `config.edn` read once; none when the garden is no graph. Its pages
    hold each other's blocks, so they are resolved once all are read (`gathered`) and never read again."""

    def __init__(self, folder: Path | None) -> None:
        self.graph = graph_of(folder.resolve()) if folder is not None else None
        self.pages = _PagesRead(self.graph) if self.graph is not None else None
        self.notices: list[tuple[str, str]] = []
        if folder is not None and self.graph is not None and self.graph.problem:
            self.notices.append((str(folder / CONFIG), self.graph.problem))

    def owns(self, path: Path) -> bool:
        return self.graph is not None and path.suffix.lower() == MARKDOWN_SUFFIX

    def parse(self, path: Path, root: Path | None) -> ParsedArticle:
        max_bytes = settings.GARDEN_NOTE_MAX_BYTES
        return parse_article_file(path, root=root, max_bytes=max_bytes, rules=self.pages)

    def slug_of(self, place: str) -> str:
        if self.graph is not None and self.graph.is_page(place):
            return article_slug(self.graph.title_of(place), place)
        return article_slug(place, place)

    def rereadable(self, note: ParsedArticle) -> bool:
        return False  # its text holds other pages' blocks

    def gathered(self, notes: Sequence[ParsedArticle]) -> list[ParsedArticle]:
        if self.pages is None:
            return list(notes)
        resolved = pages_resolved(
            notes,
            blocks=self.pages.blocks,
            body_words=lambda text: editor_markup_removed(text)[0],
            links_of=written_links,
        )
        self.notices += resolved.duplicates
        return resolved.notes


class LogseqFormat:
    """Logseq graphs: a folder with `logseq/config.edn` (or `pages/` and `journals/`), read as Logseq shows it."""

    name = "logseq"
    suffixes = frozenset({MARKDOWN_SUFFIX})

    def place_of(self, relative: PurePosixPath) -> str:
        return markdown.FORMAT.place_of(relative)

    def content_hash(self, data: bytes) -> str:
        return markdown.FORMAT.content_hash(data)

    def private_place(self, relative: PurePosixPath) -> bool:
        folders = [part.lower() for part in relative.parts[:-1]]
        return any(a == "logseq" and b in LOGSEQ_COPIES for a, b in itertools.pairwise(folders))

    def public_place(self, relative: PurePosixPath) -> bool:
        return False

    def opened(
        self, root: Path | None, imported: ImportedTitle | None, files: GardenFiles | None
    ) -> LogseqContext:
        return LogseqContext(root)


FORMAT = LogseqFormat()
