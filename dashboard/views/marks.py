"""Readers' marks on a turn: "Helpful? yes / no" on the answer, "This is wrong" (with an optional note) on a claim.

Small htmx forms that swap themselves, with a redirect back to the answer without JavaScript. Whoever may ask may
mark; a mark is counted against the same rate limits as asking, under a scope of its own.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from dashboard.permissions import ask_required, request_marker, request_reader
from dashboard.ratelimit import MARK_RATE_LIMITED, REPORTS_DAY_SPENT, rate_limited, reports_limited
from dashboard.views.htmx import HtmxHttpRequest
from garden import selectors
from garden.models import Answer
from verifier.marks import (
    MARKED_HELPFUL,
    MARKED_UNHELPFUL,
    MARKED_WRONG,
    ReaderMarks,
    answer_mark_record,
    claim_report_record,
)
from verifier.models import Claim
from verifier.review import ReviewError

NO_SESSION = (
    "Your browser sent no session cookie, so this mark could not be kept as yours. Nothing was recorded."
)


def _readable(request: HtmxHttpRequest, public_id: uuid.UUID) -> Answer:
    """The answer, when this reader may see it: only an answer one may read may be marked."""
    reader = request_reader(request)
    answer = selectors.answer_get(public_id, reader)
    if answer is None or selectors.answer_hidden_why(answer, reader) is not None:
        raise Http404("No such answer.")
    return answer


def _refused(
    request: HtmxHttpRequest, template: str, context: dict[str, object], error: str, status: int, back: str
) -> HttpResponse:
    """Nothing was recorded: the form again with `error` (htmx), or back to the answer with it as a message."""
    if request.htmx:
        return render(request, template, {**context, "error": error}, status=status)
    messages.error(request, error)
    return redirect(back)


@ask_required
@require_POST
def answer_mark(request: HtmxHttpRequest, public_id: uuid.UUID) -> HttpResponse:
    """Mark the answer helpful (`helpful=yes`) or not (`helpful=no`), replacing this reader's earlier mark."""
    answer = _readable(request, public_id)
    back = answer.get_absolute_url()
    template = "dashboard/answer.html#answer-mark"
    context: dict[str, object] = {"answer": {"answer_id": str(answer.public_id)}}
    if (wait := rate_limited(request, "mark")) is not None:
        response = _refused(request, template, context, MARK_RATE_LIMITED, 429, back)
        response["Retry-After"] = str(wait)
        return response
    marker = request_marker(request, start_session=True)
    if marker is None:
        return _refused(request, template, context, NO_SESSION, 400, back)
    helpful = request.POST.get("helpful") == "yes"
    answer_mark_record(answer=answer, marker=marker, user=request.user, helpful=helpful)
    if request.htmx:
        marks = ReaderMarks(helpful={str(answer.public_id): helpful})
        return render(request, template, {**context, "marks": marks, "saved": True})
    messages.success(request, MARKED_HELPFUL if helpful else MARKED_UNHELPFUL)
    return redirect(back)


@ask_required
@require_POST
def claim_report(request: HtmxHttpRequest, public_id: uuid.UUID, claim_id: int) -> HttpResponse:
    """Report the claim wrong, with an optional short note, replacing this reader's earlier report. The claim is
    addressed within its answer, whose id is not guessable: only a reader given the answer can report on it."""
    answer = _readable(request, public_id)
    claim = get_object_or_404(Claim, pk=claim_id, is_claim=True, verification__answer=answer)
    back = f"{answer.get_absolute_url()}#claim-{claim.pk}"
    template = "dashboard/answer.html#claim-report"
    note = request.POST.get("note", "")
    context: dict[str, object] = {
        "answer": {"answer_id": str(answer.public_id)},
        "claim": {"id": claim.pk},
        "note_max_chars": settings.REVIEW_NOTE_MAX_CHARS,
        "typed": note,
    }
    if (wait := rate_limited(request, "mark")) is not None:
        response = _refused(request, template, context, MARK_RATE_LIMITED, 429, back)
        response["Retry-After"] = str(wait)
        return response
    marker = request_marker(request, start_session=True)
    if marker is None:
        return _refused(request, template, context, NO_SESSION, 400, back)
    if (wait := reports_limited(request)) is not None:
        spent = REPORTS_DAY_SPENT.format(limit=settings.REPORTS_PER_ADDRESS_PER_DAY)
        response = _refused(request, template, context, spent, 429, back)
        response["Retry-After"] = str(wait)
        return response
    try:
        report = claim_report_record(claim=claim, marker=marker, user=request.user, note=note)
    except ReviewError as problem:
        return _refused(request, template, context, problem.message, 422, back)
    if request.htmx:
        marks = ReaderMarks(reported={claim.pk: report.note})
        return render(request, template, {**context, "marks": marks, "saved": True})
    messages.success(request, f"{MARKED_WRONG}.")
    return redirect(back)
