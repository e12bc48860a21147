"""Safe Markdown rendering: wikilinks become links, then the HTML is sanitised so nothing in an article runs."""

from __future__ import annotations

import markdown as markdown_lib
import nh3
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from garden.importer import WIKILINK, slugify

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


def _wikilinks(text: str) -> str:
    def link(match: object) -> str:
        target, label = match.group(1), match.group(2)  # type: ignore[attr-defined]
        url = reverse("dashboard:article", args=[slugify(target)])
        return f"[{(label or target).strip()}]({url})"

    return WIKILINK.sub(link, text)


def render_markdown(text: str) -> SafeString:
    """Markdown to sanitised HTML: raw HTML in the source is escaped as text, never run."""
    converter = markdown_lib.Markdown(extensions=["tables", "sane_lists"])
    # Raw HTML in an article is shown as text: without these two steps Markdown would pass it through.
    converter.preprocessors.deregister("html_block")
    converter.inlinePatterns.deregister("html")
    html = converter.convert(_wikilinks(text))
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes={"a": {"href", "title"}},
        url_schemes={"http", "https"},
        link_rel="noopener noreferrer",
    )
    return mark_safe(clean)
