"""Template helpers: citations in answers become links to the cited passages."""

from __future__ import annotations

import re

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

    return mark_safe(CITATION.sub(link, str(escape(answer.text))))


@register.filter
def markdown(text: str) -> SafeString:
    return render_markdown(text)
