"""Template helpers for the verdict panel: claims highlighted in the answer, labels as text."""

from __future__ import annotations

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from claimcheck.terms import RiskLabel
from dashboard.shapes import AnswerOut
from dashboard.templatetags.groundwork import link_citations

register = template.Library()


@register.filter
def label_text(label: str | None) -> str:
    return RiskLabel(label).text if label in set(RiskLabel) else ""


@register.filter
def label_class(label: str | None) -> str:
    return RiskLabel(label).css_class if label in set(RiskLabel) else RiskLabel.UNAVAILABLE.css_class


@register.simple_tag
def highlighted_answer(answer: AnswerOut) -> SafeString:
    """The answer with each claim of its verdict marked by status: a colour and, always, a text label."""
    text, parts, cursor = answer.answer, [], 0
    sentences = answer.verdict.sentences if answer.verdict else []
    for claim in sorted(sentences, key=lambda c: c.start):
        parts.append(str(link_citations(answer.citations, str(escape(text[cursor : claim.start])))))
        body = link_citations(answer.citations, str(escape(text[claim.start : claim.end])))
        if claim.is_claim:
            parts.append(
                format_html(
                    '<span class="claim status-{}">{} <a class="label" href="#claim-{}">[{}]</a></span>',
                    claim.status,
                    body,
                    claim.id,
                    claim.status_label,
                )
            )
        else:
            parts.append(format_html('<span class="claim not-a-claim">{}</span>', body))
        cursor = claim.end
    parts.append(str(link_citations(answer.citations, str(escape(text[cursor:])))))
    return mark_safe("".join(parts))
