"""Safe Markdown rendering: a note's links become links to the articles they resolved to at import (red links
when the note is missing), then the HTML is sanitised so nothing in an article runs."""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import markdown as markdown_lib
import nh3
from django.conf import settings
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from garden.selectors import NOT_SHARED_LINK, NOTE_NOT_SHARED, NOTE_NOT_SHARED_LINK, Embedded
from text.markup import (
    ATTACHMENTS,
    EMBED,
    IMAGE_EMBED,
    MARKDOWN_LINK,
    WIKILINK,
    heading_section,
    slugify,
    written_key,
)

# A link to a note the garden does not have is written as a link to this fragment, then shown as a red link.
_MISSING = "#missing-note"
_MISSING_LINK = re.compile(r'<a href="#missing-note"[^>]*>(.*?)</a>', re.DOTALL)
# `> [!note] Title` (or `[!tip]-` folded, `[!info]+` foldable and open) and the quoted lines under it.
CALLOUT = re.compile(r"^>[ \t]*\[!([\w-]+)\]([+-]?)[ \t]*(.*)\n?((?:>.*(?:\n|$))*)", re.MULTILINE)
# A link to a note of an audience the reader is not in: none of the words the link gives that note.
_NOT_SHARED_LINK = re.compile(rf'<a href="{NOT_SHARED_LINK}"[^>]*>(.*?)</a>', re.DOTALL)
NOT_SHARED_SHOWN = f'<span class="red-link">{NOTE_NOT_SHARED_LINK} <small>(not shared)</small></span>'
RED_LINK = (
    '<span class="red-link" title="No note of this name in the garden">\\1 <small>(missing)</small></span>'
)
# Quotes, and so callouts, nest no deeper: Python-Markdown parses a quote's text again at each level, and each
# callout is a render of its own (300 levels of callouts overflowed Python's stack).
QUOTE_DEPTH = 8
# The markers of a line past the QUOTE_DEPTH-th (`> > > ...`), taken off so that quote is the deepest.
_DEEPER_QUOTE = re.compile(rf"^((?:[ \t]*+>){{{QUOTE_DEPTH}}})(?:[ \t]*+>)++", re.MULTILINE)
# An embedded note's own embeds are links: a page shows other notes, not notes inside those.
EMBED_DEPTH = 1
EMBED_SHOWN_ABOVE = "{link} is shown above on this page."
EMBED_TOO_LONG = "{link} is too long to show here; read it on its page."
EMBED_NESTED = "{link} is embedded in an embedded note; read it on its page."

ALLOWED_TAGS = {
    "a",
    "p",
    "br",
    "strong",
    "em",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "hr",
    "sup",
    "sub",
    "del",
}


def _section(body: str, heading: str | None) -> str:
    """The part of `body` under `heading` (a block id names no section), or all of it."""
    if not heading or heading.startswith("^"):
        return body
    return heading_section(body, heading) or body


@dataclass
class EmbedBudget:
    """What one page has shown of the notes it embeds, across all the texts it renders (an article's page
    renders each passage on its own): each note once, their texts together within `settings.EMBED_MAX_CHARS`."""

    notes: set[str] = field(default_factory=set)  # the URLs of the notes shown
    chars_left: int = field(default_factory=lambda: settings.EMBED_MAX_CHARS)


@dataclass(frozen=True)
class _Page:
    """What a text is rendered with: the page's links, embeds and images, what it has shown of its embeds so
    far, and how deep in callouts and embeds the text stands."""

    links: Mapping[str, str | None] | None
    embeds: Mapping[str, Embedded] | None
    images: Mapping[str, str] | None
    shown: EmbedBudget
    callout_depth: int = 0
    embed_depth: int = 0


def _callout(match: re.Match[str], page: _Page) -> str:
    kind, fold, title = match.group(1).lower(), match.group(2), match.group(3).strip()
    inner = re.sub(r"^>[ \t]?", "", match.group(4), flags=re.MULTILINE)
    label = format_label(kind, title)
    body = _render(inner, dataclasses.replace(page, callout_depth=page.callout_depth + 1))
    if fold:
        opened = " open" if fold == "+" else ""
        return f'<details class="callout callout-{escape(kind)}"{opened}><summary>{label}</summary>{body}</details>'
    return f'<div class="callout callout-{escape(kind)}" role="note"><p class="callout-title">{label}</p>{body}</div>'


def format_label(kind: str, title: str) -> str:
    name = kind.replace("-", " ").capitalize()
    return f"<strong>{escape(name)}</strong>" + (
        f": {escape(title)}" if title and title.lower() != kind else ""
    )


def _image(match: re.Match[str], images: Mapping[str, str] | None) -> str:
    written = match["target"] or match["path"]
    name = written.rsplit("/", 1)[-1]
    url = (images or {}).get(written_key(written))
    if url is None:
        return f'<p class="embed-missing">Image not in the garden: {escape(name)}</p>'
    alt = (match["alt"] or "").strip() or name
    return f'<p class="image"><img src="{escape(url)}" alt="{escape(alt)}" loading="lazy"></p>'


def _embed(match: re.Match[str], page: _Page) -> str:
    """The embedded note's text (or its section's) the first time the page embeds it, while the page's budget
    lasts and outside another embedded note; otherwise a link to it, or a named placeholder."""
    target, heading = match["target"].strip(), match["anchor"]
    if ATTACHMENTS.search(target):
        return f'<p class="embed-missing">Attachment not shown here: {escape(target)}</p>'
    if page.embed_depth >= EMBED_DEPTH:  # `page.links`: the embedded note's own, resolved for the reader
        url = (page.links or {}).get(written_key(target))
        if url == NOT_SHARED_LINK:
            return f'<p class="embed-missing">{escape(NOTE_NOT_SHARED)}</p>'
        url = url or reverse("dashboard:article", args=[slugify(target) or "-"])
        return _embed_link(EMBED_NESTED, url, escape(target))
    embedded = (page.embeds or {}).get(written_key(target))
    if embedded is None:
        return f'<p class="embed-missing">Embedded note not in the garden: {escape(target)}</p>'
    if not embedded.shared:  # nothing of it, not even the name the embedding note gives it
        return f'<p class="embed-missing">{escape(NOTE_NOT_SHARED)}</p>'
    title = escape(embedded.title) + (
        f" › {escape(heading)}" if heading and not heading.startswith("^") else ""
    )
    if embedded.url in page.shown.notes:
        return _embed_link(EMBED_SHOWN_ABOVE, embedded.url, title)
    section = _section(embedded.body, heading) if embedded.body is not None else None
    if section is None or len(section) > page.shown.chars_left:
        return _embed_link(EMBED_TOO_LONG, embedded.url, title)
    page.shown.notes.add(embedded.url)
    page.shown.chars_left -= len(section)
    inner = _Page(embedded.links, None, None, page.shown, embed_depth=page.embed_depth + 1)
    text = _render(section, inner)
    return (
        f'<aside class="embed"><p class="embed-title">From <a href="{escape(embedded.url)}">{title}</a></p>'
        f"{text}</aside>"
    )


def _embed_link(message: str, url: str, title: str) -> str:
    """`message` with the note's title as a link to it (`title` is escaped HTML already)."""
    link = f'<a href="{escape(url)}">{title}</a>'
    return f'<p class="embed-link">{message.format(link=link)}</p>'


def _links(text: str, links: Mapping[str, str | None] | None) -> str:
    """Wikilinks and links to `.md` files as Markdown links: to the article each resolved to at import
    (`links`: the note's written targets to URLs, None for a missing note), else by the target's slug."""
    known = links or {}

    def wikilink(match: re.Match[str]) -> str:
        target, label, anchor = match["target"], match["label"], match["anchor"]
        key = written_key(target)
        anchored = f"{key}#{anchor.strip().lower()}" if anchor else ""
        if anchored in known:
            url = known[anchored]
        elif key in known:
            url = known[key]
        else:
            url = reverse("dashboard:article", args=[slugify(target) or "-"])
        return f"[{(label or target).strip()}]({url or _MISSING})"

    def markdown_link(match: re.Match[str]) -> str:
        key = written_key(match.group(2))
        if key not in known:
            return match.group(0)
        return f"[{match.group(1)}]({known[key] or _MISSING})"

    return MARKDOWN_LINK.sub(markdown_link, WIKILINK.sub(wikilink, text))


# Python-Markdown's link processors read the text in brackets from each `[` to its matching `]` one character at a
# time, and the destination after `](` up to its closing `)`: with many `[` (or `[a](b`) and no close, each
# rescans the rest of the paragraph. Here the brackets of a text are matched once, and a destination with
# nothing after it that could close it (a `)` or a title's quote) fails at once.
_LINK_PROCESSORS = (
    "reference",
    "link",
    "image_link",
    "image_reference",
    "short_reference",
    "short_image_ref",
)


class _Brackets:
    """The text a link processor reads, with each `[` matched to its `]` in one pass, and the last character
    that could close a destination; kept for the last text read (the processors read one text many times)."""

    def __init__(self) -> None:
        self.data: str | None = None
        self.closing: dict[int, int] = {}
        self.last_closer = -1

    def of(self, data: str) -> _Brackets:
        if self.data is not data:
            closing, opened = {}, []
            for position, char in enumerate(data):
                if char == "[":
                    opened.append(position)
                elif char == "]" and opened:
                    closing[opened.pop()] = position
            self.data, self.closing = data, closing
            self.last_closer = max(data.rfind(")"), data.rfind("'"), data.rfind('"'))
        return self

    def text(self, data: str, index: int) -> tuple[str, int, bool]:
        """`LinkInlineProcessor.getText`: the text from `index` (just after a `[`) to its matching `]`."""
        close = self.of(data).closing.get(index - 1)
        if close is None:
            return "", len(data), False
        return data[index:close], close + 1, True

    def link(self, get_link: Any) -> Any:
        """`LinkInlineProcessor.getLink`, failing at once when no `)` or quote follows `index`: without one,
        its count of open parentheses never returns to zero."""

        def bounded(data: str, index: int) -> tuple[str, str | None, int, bool]:
            if index > self.of(data).last_closer:
                return "", None, len(data), False
            return get_link(data, index)

        return bounded


class _Blocks:
    """The blocks of text Python-Markdown's parser works through, kept last-first: it takes them off the front
    (`pop(0)`), which on its list shifts all the others, so paragraphs cost the square of their number. Only
    what its block processors use: truth, length, indexing, `pop` and `insert`."""

    def __init__(self, blocks: list[str]) -> None:
        self.backwards = blocks[::-1]

    def __bool__(self) -> bool:
        return bool(self.backwards)

    def __len__(self) -> int:
        return len(self.backwards)

    def _at(self, index: int) -> int:
        return len(self.backwards) - 1 - (index if index >= 0 else len(self.backwards) + index)

    def __getitem__(self, index: int) -> str:
        return self.backwards[self._at(index)]

    def pop(self, index: int = -1) -> str:
        return self.backwards.pop(self._at(index))

    def insert(self, index: int, block: str) -> None:
        self.backwards.insert(len(self.backwards) - index, block)


def _converter() -> markdown_lib.Markdown:
    converter = markdown_lib.Markdown(extensions=["tables", "sane_lists"])
    # Raw HTML in an article is shown as text: without these two steps Markdown would pass it through.
    converter.preprocessors.deregister("html_block")
    converter.inlinePatterns.deregister("html")
    parser: Any = converter.parser
    parser.parseChunk = lambda parent, text: parser.parseBlocks(parent, _Blocks(text.split("\n\n")))
    brackets = _Brackets()
    for name in _LINK_PROCESSORS:
        processor: Any = converter.inlinePatterns[name]  # a link processor: its methods, replaced on it alone
        processor.getText = brackets.text
        if hasattr(processor, "getLink"):
            processor.getLink = brackets.link(processor.getLink)
    return converter


def render_markdown(
    text: str,
    links: Mapping[str, str | None] | None = None,
    embeds: Mapping[str, Embedded] | None = None,
    images: Mapping[str, str] | None = None,
    embed_budget: EmbedBudget | None = None,
) -> SafeString:
    """Markdown to sanitised HTML: raw HTML in the source is escaped as text, never run. Callouts become
    callouts (folded ones a `<details>`), nested to QUOTE_DEPTH; an embedded note shows its text (`embeds`)
    once a page, one level deep, while `embed_budget` (the page's, or this text's own) lasts, else a link to
    it; an embedded image shows itself (`images`: as written -> URL); anything missing, a named placeholder."""
    page = _Page(links, embeds, images, embed_budget if embed_budget is not None else EmbedBudget())
    return mark_safe(_render(text, page))


def _render(text: str, page: _Page) -> str:
    held: list[str] = []
    marker = f"held{secrets.token_hex(6)}n"  # unguessable, so no text of a note can pose as one

    def hold(html: str) -> str:
        held.append(html)
        return f"\n\n{marker}{len(held) - 1}\n\n"

    if page.callout_depth == 0:  # a note's own text: inside a callout, its quotes were cut already
        text = _DEEPER_QUOTE.sub(r"\1", text)
    if page.callout_depth < QUOTE_DEPTH:
        text = CALLOUT.sub(lambda m: hold(_callout(m, page)), text)
    text = IMAGE_EMBED.sub(lambda m: hold(_image(m, page.images)), text)
    text = EMBED.sub(lambda m: hold(_embed(m, page)), text)
    html = _converter().convert(_links(text, page.links))
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes={"a": {"href", "title"}},
        url_schemes={"http", "https"},
        link_rel="noopener noreferrer",
    )
    clean = _MISSING_LINK.sub(RED_LINK, clean)
    clean = _NOT_SHARED_LINK.sub(NOT_SHARED_SHOWN, clean)
    # Each held block was built from sanitised parts; it goes back where its placeholder paragraph stands.
    return re.sub(rf"<p>{marker}(\d+)</p>", lambda m: held[int(m.group(1))], clean)
