"""Template helpers: citations in answers become links to the cited passages."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from dashboard.markdown import render_markdown
from dashboard.shapes.answers import AnswerOut, CitationOut
from garden.answering.synthesis import BUDGET_SPENT
from text.markup import MARKER, marker_numbers

register = template.Library()


@register.simple_tag
def budget_spent_note() -> str:
    """What an answer the local synthesiser wrote because Claude's budget was spent says to its reader."""
    return BUDGET_SPENT


@register.filter
def cited(answer: AnswerOut) -> SafeString:
    """The answer text, escaped, with each `[n]` linked to source n's passage (unknown numbers stay text)."""
    return link_citations(answer.citations, str(escape(answer.answer)))


def link_citations(citations: Sequence[CitationOut], escaped: str) -> SafeString:
    """Already-escaped text with each `[n]` linked to the passage of the answer's source n; a marker of several
    numbers (`[1, 3]`, `[2-4]`) becomes one link per number. A number with no such source stays text."""
    sources = {citation.number: citation for citation in citations}

    def cite(number: int) -> str:
        source = sources.get(number)
        if source is None:
            return f"[{number}]"
        return format_html(
            '<a class="cite" href="{}" title="Source {}: {}">[{}]</a>',
            source.url,
            number,
            source.cited_as,
            number,
        )

    def link(match: re.Match[str]) -> str:
        numbers = marker_numbers(match.group(1))
        if not any(number in sources for number in numbers):
            return match.group(0)
        return "".join(cite(number) for number in numbers)

    return mark_safe(MARKER.sub(link, escaped))


@register.filter
def markdown(text: str, page: dict[str, Any] | None = None) -> SafeString:
    """Article Markdown as safe HTML; `page` holds the article's `links` (each to where it resolved at import),
    `embeds` (the notes it embeds) and `embed_budget` (what its passages have shown of those so far)."""
    page = page or {}
    return render_markdown(
        text, page.get("links"), page.get("embeds"), page.get("images"), page.get("embed_budget")
    )


@register.filter
def percent(value: object) -> str:
    """A rate in [0, 1] as a percentage; a dash when there is none."""
    return f"{value:.1%}" if isinstance(value, int | float) else "–"


@register.filter
def points(value: object) -> str:
    """A change between two rates, in percentage points with its sign."""
    return f"{value * 100:+.1f} pp" if isinstance(value, int | float) else "–"
