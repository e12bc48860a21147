"""A Logseq graph as its `logseq/config.edn` describes it (`Graph`, `graph_of`): its title and file name
formats, its hidden places, and how one of its pages is read (`Graph.page_read`).
"""

from __future__ import annotations

import datetime
import logging
import re
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote

from garden.formats.logseq.blocks import logseq_body, properties_listed
from garden.formats.logseq.dates import date_format_known, date_formatted, date_parsed
from garden.formats.logseq.edn import EdnError, edn_read
from garden.formats.markdown import (
    DATE_FIELDS,
    EditorPage,
)
from text.markup import link_unwrapped

logger = logging.getLogger(__name__)


CONFIG = "logseq/config.edn"
STORAGE_FOLDERS = ("pages", "journals")  # where Logseq keeps files: no part of a page's name or address
# Journal titles when config.edn names no format: ISO dates, which read alike in every language (Logseq's own
# default config.edn names one, "MMM do, yyyy", and a graph that keeps it gets Logseq's titles).
DEFAULT_TITLE_FORMAT = "yyyy-MM-dd"
DEFAULT_JOURNAL_FILE_FORMAT = "yyyy_MM_dd"
TRIPLE_LOWBAR = "triple-lowbar"
LEGACY = "legacy"
CONFIG_NOT_READ = "could not be read whole ({reason}); Logseq's defaults stand for what could not be read"
CONFIG_UNKNOWN_FORMAT = "{key} {value!r} is not a date format this import knows; ISO dates are used"
CONFIG_MAX_BYTES = 1_000_000  # Logseq's own config.edn is some 20 KB; a larger one is not read
CONFIG_TOO_LARGE = "is over {limit:,} bytes, so it was not read; Logseq's defaults stand"


@dataclass(frozen=True)
class Graph:
    """What this import needs of a Logseq graph's `config.edn`."""

    root: Path
    file_name_format: str = LEGACY  # no `:file/name-format` means the legacy format
    title_format: str = DEFAULT_TITLE_FORMAT
    journal_file_format: str = DEFAULT_JOURNAL_FILE_FORMAT
    hidden: tuple[str, ...] = ()  # folders and files Logseq leaves out of the graph, as paths from its root
    problem: str = ""  # why config.edn was not read whole, for the import's summary

    def title_of(self, relative_path: str) -> str:
        """The title Logseq gives the file at `relative_path` (without `.md`) when it has no `title::`."""
        date = self.journal_date(relative_path)
        if date is not None:
            return self.journal_title(date)
        return file_name_decoded(PurePosixPath(relative_path).name, self.file_name_format)

    def journal_date(self, relative_path: str) -> datetime.date | None:
        """The date of a journal file (`journals/2021_07_19`), or None for a page."""
        place = PurePosixPath(relative_path)
        if len(place.parts) != 2 or place.parts[0] != "journals":
            return None
        for pattern in (self.journal_file_format, DEFAULT_JOURNAL_FILE_FORMAT, "yyyy-MM-dd"):
            date = date_parsed(place.name, pattern)
            if date is not None:
                return date
        return None

    def journal_title(self, date: datetime.date) -> str:
        if date_format_known(self.title_format):
            return date_formatted(date, self.title_format)
        return date.isoformat()

    def date_value(self, value: str) -> datetime.date | None:
        """A date property's value (`[[2025-02-22 Sat]]`, `[[Feb 22nd, 2025]]`) as a date, or None."""
        text = link_unwrapped(value)
        if date_format_known(self.title_format):
            date = date_parsed(text, self.title_format)
            if date is not None:
                return date
        try:
            return datetime.date.fromisoformat(text[:10])
        except ValueError:
            return None

    def is_page(self, relative_path: str) -> bool:
        """Whether the file at `relative_path` is one of the graph's pages or journals (not, say, a copy in
        Logseq's own `logseq/bak/`)."""
        parts = PurePosixPath(relative_path).parts
        return len(parts) == 2 and parts[0] in STORAGE_FOLDERS

    def page_read(
        self, meta: dict[str, Any], properties: dict[str, Any], body: str, place: str
    ) -> EditorPage:
        """A Logseq page: its title is `title::` (or front matter's), else its file name in the graph's format,
        a journal's its date in the graph's title format; `alias::`, `tags::` and `type::` are lists of names
        (`[[a]], b`), `type::` kept as tags; `description::` is the page's first text; date properties in the
        graph's date format are dates; block properties are no text."""
        journal = self.journal_date(place)
        written = [meta.get("title"), properties.get("title")]
        title = next(
            (str(t).strip() for t in written if isinstance(t, str | int | float) and str(t).strip()), None
        )
        title = title or self.title_of(place)
        read: dict[str, Any] = {}
        for key in ("alias", "aliases"):
            if isinstance(properties.get(key), str):
                read[key] = list(properties_listed(properties[key]))
        tags = [
            name
            for key in ("tags", "tag", "type")
            if isinstance(properties.get(key), str)
            for name in properties_listed(properties[key])
        ]
        if tags:
            read["tags"], read["tag"] = tags, None
        for key in DATE_FIELDS:
            value = properties.get(key)
            if isinstance(value, str):
                # A property, not front matter: one that is no date in any format the graph uses is left out.
                read[key] = self.date_value(value)
        description = str(properties.get("description") or "").strip()
        linked = " ".join(
            str(properties[key]) for key in ("tags", "tag", "type") if isinstance(properties.get(key), str)
        )
        text = logseq_body(body)
        if description:
            text = f"{description}\n\n{text}"
        return EditorPage(
            title=title,
            body=text,
            properties=read,
            description=description,
            date=journal,
            linked=f"\n{linked}" if "[[" in linked else "",
            hidden=self.hides(place),
        )

    def hides(self, relative_path: str) -> bool:
        """Whether `:hidden` names the file at `relative_path` (without `.md`) or a folder it is in."""
        path = "/" + relative_path.lstrip("/")
        return any(
            path in (hidden, hidden.removesuffix(".md")) or path.startswith(hidden.rstrip("/") + "/")
            for hidden in self.hidden
        )


def is_graph(folder: Path) -> bool:
    """A folder with Logseq's `config.edn`, or with its `pages/` and `journals/` and no Obsidian settings (a
    vault with folders of those names keeps its addresses)."""
    if (folder / CONFIG).is_file():
        return True
    return all((folder / name).is_dir() for name in STORAGE_FOLDERS) and not (folder / ".obsidian").exists()


_CONFIG_KEYS = {
    ":file/name-format": r":([\w-]+)",
    ":journal/page-title-format": r'"((?:[^"\\]|\\.)*)"',
    ":date-formatter": r'"((?:[^"\\]|\\.)*)"',
    ":journal/file-name-format": r'"((?:[^"\\]|\\.)*)"',
}


def graph_of(folder: Path) -> Graph | None:
    """The Logseq graph at `folder`, or None when it is not one. A `config.edn` that cannot be read whole is
    searched for its keys one by one, and the graph says so (`problem`)."""
    if not folder.is_dir() or not is_graph(folder):
        return None
    config: dict[Any, Any] = {}
    problem = ""
    path = folder / CONFIG
    if path.is_file():
        try:
            with path.open("rb") as config_file:
                data = config_file.read(CONFIG_MAX_BYTES + 1)
            text = data.decode("utf-8", errors="replace")
            if len(data) > CONFIG_MAX_BYTES:
                text, problem = "", CONFIG_TOO_LARGE.format(limit=CONFIG_MAX_BYTES)
        except OSError as error:
            text, problem = "", CONFIG_NOT_READ.format(reason=error.strerror or error)
        try:
            read = edn_read(text) if text.strip() else {}
            if not isinstance(read, dict):
                raise EdnError("it is not a map")
            config = read
        except (EdnError, RecursionError) as error:
            problem = CONFIG_NOT_READ.format(reason=f"not EDN: {error}")
            for key, value in _CONFIG_KEYS.items():
                found = re.search(rf"{re.escape(key)}\s+{value}", text)
                if found is not None:
                    config[key] = found.group(1) if value.startswith('"') else f":{found.group(1)}"
    name_format = config.get(":file/name-format")
    title_format = config.get(":journal/page-title-format", config.get(":date-formatter"))
    file_format = config.get(":journal/file-name-format")
    hidden = config.get(":hidden")
    graph = Graph(
        root=folder,
        file_name_format=TRIPLE_LOWBAR if name_format == f":{TRIPLE_LOWBAR}" else LEGACY,
        title_format=title_format if isinstance(title_format, str) else DEFAULT_TITLE_FORMAT,
        journal_file_format=file_format if isinstance(file_format, str) else DEFAULT_JOURNAL_FILE_FORMAT,
        hidden=tuple(
            "/" + item.strip("/") for item in hidden or () if isinstance(item, str) and item.strip("/")
        )
        if isinstance(hidden, list)
        else (),
    )
    if not problem and not date_format_known(graph.title_format):
        problem = CONFIG_UNKNOWN_FORMAT.format(key=":journal/page-title-format", value=graph.title_format)
    if problem:
        logger.warning("%s %s", path, problem)
    return replace(graph, problem=problem)


_URL_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def file_name_decoded(name: str, name_format: str = TRIPLE_LOWBAR) -> str:
    """A page's title from its file name: `a___b` is `a/b` (`:triple-lowbar`), `a.b` and `a%2Fb` are `a/b`
    (legacy), and URL escapes (`%3F`) are their characters in both."""
    if name_format == TRIPLE_LOWBAR:
        return unquote(name.replace("___", "/")) if _URL_ESCAPE.search(name) else name.replace("___", "/")
    if _URL_ESCAPE.search(name):
        return unquote(name)  # a name with escapes writes its namespaces as %2F, its dots as dots
    return name.replace(".", "/")
