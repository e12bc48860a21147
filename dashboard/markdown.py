"""Safe Markdown rendering: a note's links become links to the articles they resolved to at import (red links
when the note is missing), then the HTML is sanitised so nothing in an article runs."""

from __future__ import annotations

import re
from collections.abc import Mapping

import markdown as markdown_lib
import nh3
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from garden.importer import MARKDOWN_LINK, WIKILINK, slugify, written_key

# A link to a note the garden does not have is written as a link to this fragment, then shown as a red link.
_MISSING = "#missing-note"
_MISSING_LINK = re.compile(r'<a href="#missing-note"[^>]*>(.*?)</a>', re.DOTALL)
RED_LINK = (
    '<span class="red-link" title="No note of this name in the garden">\\1 <small>(missing)</small></span>'
)

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


def _links(text: str, links: Mapping[str, str | None] | None) -> str:
    """Wikilinks and links to `.md` files as Markdown links: to the article each resolved to at import
    (`links`: the note's written targets to URLs, None for a missing note), else by the target's slug."""
    known = links or {}

    def wikilink(match: re.Match[str]) -> str:
        target, label = match.group(1), match.group(2)
        key = written_key(target)
        url = known[key] if key in known else reverse("dashboard:article", args=[slugify(target) or "-"])
        return f"[{(label or target).strip()}]({url or _MISSING})"

    def markdown_link(match: re.Match[str]) -> str:
        key = written_key(match.group(2))
        if key not in known:
            return match.group(0)
        return f"[{match.group(1)}]({known[key] or _MISSING})"

    return MARKDOWN_LINK.sub(markdown_link, WIKILINK.sub(wikilink, text))


def render_markdown(text: str, links: Mapping[str, str | None] | None = None) -> SafeString:
    """Markdown to sanitised HTML: raw HTML in the source is escaped as text, never run."""
    converter = markdown_lib.Markdown(extensions=["tables", "sane_lists"])
    # Raw HTML in an article is shown as text: without these two steps Markdown would pass it through.
    converter.preprocessors.deregister("html_block")
    converter.inlinePatterns.deregister("html")
    html = converter.convert(_links(text, links))
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes={"a": {"href", "title"}},
        url_schemes={"http", "https"},
        link_rel="noopener noreferrer",
    )
    return mark_safe(_MISSING_LINK.sub(RED_LINK, clean))
