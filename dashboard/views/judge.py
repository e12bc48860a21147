"""Operator actions on the local judge's parameters: retrain with editors' reviews, follow it, roll back."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from dashboard.permissions import role_required
from dashboard.views.htmx import HtmxHttpRequest
from evaluation.retraining import RetrainError, judge_parameters_activate, judge_retrain_start
from verifier.models import JudgeParameters
from verifier.roles import RETRAIN_JUDGE

RETRAIN_QUEUED = "Retraining the judge as version {version}: its outcome appears below when it is done."
ACTIVATED = "Version {version} of the judge's parameters is now active: new verifications use it."


@role_required(RETRAIN_JUDGE)
@require_POST
def judge_retrain(request: HtmxHttpRequest) -> HttpResponse:
    """Queue a retraining with editors' reviews (refused at once when there are too few)."""
    try:
        version = judge_retrain_start(user_id=request.user.pk)
    except RetrainError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, RETRAIN_QUEUED.format(version=version.version))
    return redirect("dashboard:logs")


@role_required(RETRAIN_JUDGE)
@require_POST
def judge_activate(request: HtmxHttpRequest, version: int) -> HttpResponse:
    """Make an older (or newer) kept version active: the rollback."""
    try:
        judge_parameters_activate(version=version)
    except RetrainError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, ACTIVATED.format(version=version))
    return redirect("dashboard:logs")


@role_required(RETRAIN_JUDGE)
@require_GET
def judge_version(request: HtmxHttpRequest, version: int) -> HttpResponse:
    """One version's row, which the logs page polls while it is retraining."""
    context = {"v": get_object_or_404(JudgeParameters, version=version), "can_retrain": True}
    return render(request, "dashboard/logs.html#judge-version", context)
