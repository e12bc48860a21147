"""Editor pages: the review queue of flagged claims, and one-click decisions (htmx, with a form fallback)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from claimcheck.terms import FLAGGED, ClaimStatus, choices
from dashboard.permissions import request_reader, role_required
from dashboard.views.htmx import HtmxHttpRequest, query_date, safe_next
from garden.models import Answer, Topic
from verifier.models import Claim
from verifier.review import (
    QueueFilters,
    ReviewError,
    agreement_rates,
    claims_flagged,
    claims_shown,
    review_record,
)
from verifier.roles import REVIEW

PAGE_SIZE = 30


@role_required(REVIEW)
@require_GET
def queue_page(request: HtmxHttpRequest) -> HttpResponse:
    filters = QueueFilters(
        status=request.GET.get("status", ""),
        topic=request.GET.get("topic", ""),
        since=query_date(request.GET.get("since")),
        until=query_date(request.GET.get("until")),
        reviewed=request.GET.get("reviewed") == "1",
        reported=request.GET.get("reports") == "1",
    )
    reader = request_reader(request)
    claims = claims_shown(list(claims_flagged(filters, reader)[:PAGE_SIZE]), reader)
    return render(
        request,
        "dashboard/review.html",
        {
            "claims": claims,
            "filters": filters,
            "statuses": FLAGGED,
            "topics": Topic.objects.read_by(reader),
            "all_statuses": choices(ClaimStatus),
            "agreement": agreement_rates(),
            "note_max_chars": settings.REVIEW_NOTE_MAX_CHARS,
        },
    )


@role_required(REVIEW)
@require_POST
def decide(request: HtmxHttpRequest, claim_id: int) -> HttpResponse:
    """Record 'judge right', 'judge wrong' (with the correct status) or a note on one claim."""
    reader = request_reader(request)
    claim = get_object_or_404(
        Claim.objects.select_related("verification__answer__question", "passage__article"),
        pk=claim_id,
        verification__answer__in=Answer.objects.readable(reader),
    )
    error = ""
    try:
        review_record(
            claim=claim,
            reviewer=request.user,
            decision=request.POST.get("decision", ""),
            correct_status=request.POST.get("correct_status", ""),
            note=request.POST.get("note", ""),
        )
    except ReviewError as problem:
        error = problem.message
    if request.htmx:
        return render(
            request,
            "dashboard/review.html#claim-card",
            {
                "claim": claims_shown([claim], reader)[0],
                "error": error,
                "decided": not error,
                "all_statuses": choices(ClaimStatus),
                "reviews": claim.reviews.all(),
                "note_max_chars": settings.REVIEW_NOTE_MAX_CHARS,
            },
            status=422 if error else 200,
        )
    if error:
        messages.error(request, error)
    else:
        messages.success(request, "Decision recorded.")
    return redirect(safe_next(request, request.POST.get("next"), default=reverse("dashboard:review")))
