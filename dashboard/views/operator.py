"""Operator pages: Verify-all runs with live progress, reports, comparisons, exports."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from claimcheck.terms import Severity, Verdict, choices
from dashboard.permissions import request_reader, role_required
from dashboard.views.htmx import HtmxHttpRequest, query_date
from evaluation.audiences import UnknownAudience, audience_named
from evaluation.chart import runs_chart
from evaluation.comparison import runs_compare, runs_not_comparable
from evaluation.export import run_csv, run_json
from evaluation.models import VerifyRun
from evaluation.report import report_shown
from evaluation.running import RUN_FAILED, run_progress
from evaluation.starting import RunNotQueued, verify_run_start
from garden.answering.retrieval import Thresholds, calibration_in_force
from garden.models import Audience
from verifier.health import health_check
from verifier.logs import DOES_NOT_ANSWER as DOES_NOT_ANSWER_FILTER
from verifier.logs import LogFilters, alerts, answers_logged, spending_summary
from verifier.marks import answers_unhelpful
from verifier.models import JudgeParameters
from verifier.roles import RETRAIN_JUDGE, RUN_VERIFY_ALL, VIEW_LOGS
from verifier.selectors import DOES_NOT_ANSWER


@role_required(RUN_VERIFY_ALL)
@require_http_methods(["GET", "POST"])
def runs_page(request: HtmxHttpRequest) -> HttpResponse:
    """Every run, the headline and the answered rate across runs, and a button that starts a new one."""
    if request.method == "POST":
        label = (request.POST.get("label") or "").strip()[:100] or "Verify-all"
        try:
            run = verify_run_start(
                label=label, user_id=request.user.pk, audience=request.POST.get("audience") or ""
            )
        except (RunNotQueued, UnknownAudience) as error:
            messages.error(request, error.message)
            return redirect("dashboard:runs")
        return redirect("dashboard:run", run_id=run.pk)
    runs = list(VerifyRun.objects.all()[:50])
    chart = runs_chart(runs)
    audiences = Audience.objects.values_list("name", flat=True)
    context = {
        "runs": runs,
        "chart": chart,
        "audiences": audiences,
        "default_audience": audience_named(""),
    }
    return render(request, "dashboard/runs.html", context)


@role_required(RUN_VERIFY_ALL)
@require_GET
def run_page(request: HtmxHttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(VerifyRun, pk=run_id)
    done, total = run_progress(run)
    context = {
        "run": run,
        "done": done,
        "total": total,
        "percent": round(100 * done / total) if total else 100,
        "run_failed": RUN_FAILED,
        "report": report_shown(run, request_reader(request)),
    }
    if request.htmx and request.htmx.target == f"run-{run.pk}":
        return render(request, "dashboard/run.html#run", context)
    return render(request, "dashboard/run.html", context)


@role_required(RUN_VERIFY_ALL)
@require_GET
def run_compare(request: HtmxHttpRequest) -> HttpResponse:
    first = get_object_or_404(VerifyRun, pk=request.GET.get("first") or 0)
    second = get_object_or_404(VerifyRun, pk=request.GET.get("second") or 0)
    return render(
        request,
        "dashboard/compare.html",
        {
            "first": first,
            "second": second,
            "rows": runs_compare(first, second),
            "not_comparable": runs_not_comparable(first, second),
        },
    )


@role_required(RUN_VERIFY_ALL)
@require_GET
def run_export(request: HtmxHttpRequest, run_id: int, fmt: str) -> HttpResponse:
    if fmt not in {"csv", "json"}:
        raise Http404("Exports are CSV or JSON.")
    run = get_object_or_404(VerifyRun, pk=run_id)
    if fmt == "csv":
        response = HttpResponse(run_csv(run, request_reader(request)), content_type="text/csv; charset=utf-8")
    else:
        response = HttpResponse(run_json(run, request_reader(request)), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="verify-all-{run.pk}.{fmt}"'
    return response


@role_required(VIEW_LOGS)
@require_GET
def logs_page(request: HtmxHttpRequest) -> HttpResponse:
    """Every answer with its verdict, critic findings, judges, tokens, cost and latency; alerts first; the
    local judge's parameter versions, with retraining and rollback for those allowed."""
    filters = LogFilters(
        verdict=request.GET.get("verdict", ""),
        severity=request.GET.get("severity", ""),
        since=query_date(request.GET.get("since")),
        until=query_date(request.GET.get("until")),
    )
    answers = answers_logged(filters)
    return render(
        request,
        "dashboard/logs.html",
        {
            "answers": answers[:100],
            "unhelpful": answers_unhelpful(answers),
            "filters": filters,
            "alerts": alerts(),
            "health": health_check(),
            "spend": spending_summary(),
            "verdicts": choices(Verdict),
            "does_not_answer": (DOES_NOT_ANSWER_FILTER, DOES_NOT_ANSWER),
            "severities": choices(Severity),
            "judge_versions": JudgeParameters.objects.select_related("created_by")[:20],
            "calibration": calibration_in_force(),
            "default_thresholds": Thresholds.from_settings(),
            "can_retrain": request.user.has_perm(RETRAIN_JUDGE),
        },
    )
