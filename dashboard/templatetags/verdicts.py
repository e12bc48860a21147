"""Template helpers for the verdict panel: claims highlighted in the answer, labels as text."""

from __future__ import annotations

from collections.abc import Sequence

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from claimcheck.terms import RiskLabel
from dashboard.presenters import passage_url
from dashboard.templatetags.groundwork import link_citations
from garden.models import Answer, Chunk
from verifier.models import Claim, Verification
from verifier.selectors import VerdictSummary
from verifier.selectors import verdict_summary as summarise

register = template.Library()


@register.simple_tag
def verdict_summary(verification: Verification) -> VerdictSummary:
    return summarise(verification)


@register.filter
def label_text(label: str) -> str:
    return RiskLabel(label).text if label in set(RiskLabel) else ""


@register.filter
def label_class(label: str) -> str:
    return RiskLabel(label).css_class if label in set(RiskLabel) else RiskLabel.UNAVAILABLE.css_class


@register.simple_tag(name="passage_url")
def chunk_passage_url(chunk: Chunk) -> str:
    return passage_url(chunk)


@register.simple_tag
def highlighted_answer(answer: Answer, claims: Sequence[Claim]) -> SafeString:
    """The answer with each claim marked by status: a colour and, always, a text label."""
    text, parts, cursor = answer.text, [], 0
    for claim in sorted(claims, key=lambda c: c.start):
        parts.append(str(link_citations(answer, str(escape(text[cursor : claim.start])))))
        body = link_citations(answer, str(escape(text[claim.start : claim.end])))
        if claim.is_claim:
            parts.append(
                format_html(
                    '<span class="claim status-{}">{} <a class="label" href="#claim-{}">[{}]</a></span>',
                    claim.status,
                    body,
                    claim.pk,
                    claim.get_status_display(),
                )
            )
        else:
            parts.append(format_html('<span class="claim not-a-claim">{}</span>', body))
        cursor = claim.end
    parts.append(str(link_citations(answer, str(escape(text[cursor:])))))
    return mark_safe("".join(parts))
