"""Template helpers for the verdict panel: claims highlighted in the answer, labels as text, a reader's own marks."""

from __future__ import annotations

from django import template
from django.conf import settings
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from claimcheck.terms import RiskLabel
from dashboard.shapes.answers import AnswerOut
from dashboard.templatetags.groundwork import link_citations
from verifier.marks import MARKED_HELPFUL, MARKED_UNHELPFUL, MARKED_WRONG, ReaderMarks

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


@register.filter
def answer_mark(marks: ReaderMarks | None, answer_id: str) -> bool | None:
    """This reader's own mark on the answer: True (helpful), False (not helpful) or None (not marked)."""
    return marks.helpful.get(answer_id) if marks else None


@register.filter
def claim_reported(marks: ReaderMarks | None, claim_id: int) -> str | None:
    """This reader's own note on a claim they reported wrong ("" for none), or None when they did not."""
    return marks.reported.get(claim_id) if marks else None


@register.filter
def helpful_said(mark: bool | None) -> str:
    """What a reader is told of their own mark on an answer."""
    return "" if mark is None else MARKED_HELPFUL if mark else MARKED_UNHELPFUL


@register.filter
def wrong_said(note: str | None) -> str:
    """What a reader is told of their own report on a claim, with their note."""
    if note is None:
        return ""
    return f"{MARKED_WRONG}: “{note}”" if note else f"{MARKED_WRONG}."


@register.simple_tag
def note_max_chars() -> int:
    """The longest note a reader (or an editor) may write on a claim."""
    return int(settings.REVIEW_NOTE_MAX_CHARS)
