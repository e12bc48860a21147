"""Template helpers: citations in answers become links to the cited passages."""

from __future__ import annotations

import re
from typing import Any

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from dashboard.markdown import render_markdown
from dashboard.presenters import passage_url
from garden.models import Answer

register = template.Library()
CITATION = re.compile(r"\[(\d+)\]")


@register.filter
def cited(answer: Answer) -> SafeString:
    """The answer text, escaped, with each `[n]` linked to source n's passage (unknown numbers stay text)."""
    return link_citations(answer, str(escape(answer.text)))


def link_citations(answer: Answer, escaped: str) -> SafeString:
    """Already-escaped text with each `[n]` linked to the passage of the answer's source n."""
    sources = {s.number: s for s in answer.sources.all()}

    def link(match: re.Match[str]) -> str:
        source = sources.get(int(match.group(1)))
        if source is None:
            return match.group(0)
        chunk = source.chunk
        url = passage_url(chunk.article.slug, chunk.revision_id, chunk.pk, current=chunk.is_current)
        return format_html(
            '<a class="cite" href="{}" title="Source {}: {}">[{}]</a>',
            url,
            source.number,
            chunk.article.title,
            source.number,
        )

    return mark_safe(CITATION.sub(link, escaped))


@register.filter
def markdown(text: str, page: dict[str, Any] | None = None) -> SafeString:
    """Article Markdown as safe HTML; `page` holds the article's `links` (each to where it resolved at import)
    and `embeds` (the notes it embeds)."""
    page = page or {}
    return render_markdown(text, page.get("links"), page.get("embeds"), page.get("images"))


@register.filter
def percent(value: object) -> str:
    """A rate in [0, 1] as a percentage; a dash when there is none."""
    return f"{value:.1%}" if isinstance(value, int | float) else "–"


@register.filter
def points(value: object) -> str:
    """A change between two rates, in percentage points with its sign."""
    return f"{value * 100:+.1f} pp" if isinstance(value, int | float) else "–"
