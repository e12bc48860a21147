"""Readers' marks on a turn: "Helpful? yes / no" on the answer, "This is wrong" (with an optional note) on a claim.

Small htmx forms that swap themselves, with a redirect back to the answer without JavaScript. Whoever may ask may
mark; a mark is counted against the same rate limits as asking, under a scope of its own.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from dashboard.actions import answers as marks
from dashboard.actions.refusals import Outcome, Refused
from dashboard.permissions import ask_required
from dashboard.views.htmx import HtmxHttpRequest
from verifier.marks import MARKED_HELPFUL, MARKED_UNHELPFUL, MARKED_WRONG, ReaderMarks

# How the page tells each refusal (the question box's 404 and 403 aside): its status.
REFUSED_STATUS = {Outcome.LIMITED: 429, Outcome.FORBIDDEN: 400, Outcome.INVALID: 422}


def _refused(
    request: HtmxHttpRequest, template: str, context: dict[str, object], refused: Refused, back: str
) -> HttpResponse:
    """Nothing was recorded: the form again with why (htmx), or back to the answer with it as a message. An
    answer or claim the reader may not see is not found."""
    if refused.outcome in {Outcome.NOT_FOUND, Outcome.WITHHELD}:
        raise Http404("No such answer." if refused.outcome is Outcome.WITHHELD else refused.message)
    if request.htmx:
        response = render(
            request, template, {**context, "error": refused.message}, status=REFUSED_STATUS[refused.outcome]
        )
    else:
        messages.error(request, refused.message)
        response = redirect(back)
    if refused.retry_after is not None:
        response["Retry-After"] = str(refused.retry_after)
    return response


@ask_required
@require_POST
def answer_mark(request: HtmxHttpRequest, public_id: uuid.UUID) -> HttpResponse:
    """Mark the answer helpful (`helpful=yes`) or not (`helpful=no`), replacing this reader's earlier mark."""
    back = reverse("dashboard:answer", args=[public_id])
    template = "dashboard/answer.html#answer-mark"
    context: dict[str, object] = {"answer": {"answer_id": str(public_id)}}
    helpful = request.POST.get("helpful") == "yes"
    try:
        marks.answer_mark(request, public_id, helpful=helpful, start_session=True)
    except Refused as refused:
        return _refused(request, template, context, refused, back)
    if request.htmx:
        marked = ReaderMarks(helpful={str(public_id): helpful})
        return render(request, template, {**context, "marks": marked, "saved": True})
    messages.success(request, MARKED_HELPFUL if helpful else MARKED_UNHELPFUL)
    return redirect(back)


@ask_required
@require_POST
def claim_report(request: HtmxHttpRequest, public_id: uuid.UUID, claim_id: int) -> HttpResponse:
    """Report the claim wrong, with an optional short note, replacing this reader's earlier report. The claim is
    addressed within its answer, whose id is not guessable: only a reader given the answer can report on it."""
    back = f"{reverse('dashboard:answer', args=[public_id])}#claim-{claim_id}"
    template = "dashboard/answer.html#claim-report"
    note = request.POST.get("note", "")
    context: dict[str, object] = {
        "answer": {"answer_id": str(public_id)},
        "claim": {"id": claim_id},
        "note_max_chars": settings.REVIEW_NOTE_MAX_CHARS,
        "typed": note,
    }
    try:
        report = marks.claim_report(request, public_id, claim_id, note=note, start_session=True)
    except Refused as refused:
        return _refused(request, template, context, refused, back)
    if request.htmx:
        marked = ReaderMarks(reported={claim_id: report.note})
        return render(request, template, {**context, "marks": marked, "saved": True})
    messages.success(request, f"{MARKED_WRONG}.")
    return redirect(back)
