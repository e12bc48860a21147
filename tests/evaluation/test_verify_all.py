"""Verify-all: the golden set through the whole flow, its report, comparisons and exports."""

import csv
import io
import json
import re

import pytest
import yaml
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from claimcheck.terms import JudgeMode, JurorRole
from config.services import free_port
from evaluation.comparison import FigureChange, runs_compare
from evaluation.export import run_csv
from evaluation.golden import golden_sync
from evaluation.models import GoldenQuestion, RunItemStatus, RunStatus, VerifyRun, VerifyRunItem
from evaluation.report import NO_JUDGE, JudgeRan, report_shown, run_report
from evaluation.running import RUN_FAILED, verify_run_item
from evaluation.starting import QUEUE_UNREACHABLE, verify_run_start
from garden.golden import DEFAULT_FILE
from tests.factories import login, page_text, verification_with_claims
from verifier.models import Verification, Vote
from verifier.roles import roles_ensure

pytestmark = pytest.mark.django_db


def run_inline(label, golden_file):
    run = verify_run_start(label=label, queue=False, golden_file=golden_file)
    for item_id in run.items.values_list("pk", flat=True):
        verify_run_item(item_id=item_id)
    run.refresh_from_db()
    return run


def test_the_golden_set_loads_from_its_file():
    count = golden_sync()
    assert count == GoldenQuestion.objects.filter(active=True).count() >= 55
    assert GoldenQuestion.objects.filter(category="out_of_scope", expected_articles=[]).exists()


def test_the_golden_set_carries_each_expected_answer_and_superseded_fact():
    golden_sync()
    fare = GoldenQuestion.objects.get(code="g045")
    assert (fare.reference_answer, fare.outdated_fact) == ("£16.50 (2025 fares)", "£14.00 (2023 fares)")
    assert GoldenQuestion.objects.get(code="g002").outdated_fact == ""


def test_a_run_reports_claim_rates_refusals_and_categories(small_golden):
    run = run_inline("baseline", small_golden)
    report = run.report
    assert run.status == RunStatus.DONE and report["questions"] == 4 and report["errors"] == 0
    assert report["claims"] > 0
    rates = [report[k] for k in ("verified_claim_rate", "unverified_claim_rate", "contradicted_claim_rate")]
    assert all(0 <= r <= 1 for r in rates) and sum(rates) <= 1
    assert report["refusal_rate"] == 0.25 and report["out_of_scope_refused"] == 1.0
    assert report["in_scope_refused"] == 0.0
    assert set(report["per_category"]) == {"single_fact", "outdated", "out_of_scope"}
    assert all(c["claim"] and c["answer"] for c in report["unverified_claims"])


def test_a_run_whose_report_fails_is_marked_failed_not_left_running(small_golden, client, monkeypatch):
    def broken_report(run):
        raise RuntimeError("the report could not be computed")

    monkeypatch.setattr("evaluation.running.run_report", broken_report)
    with pytest.raises(RuntimeError):
        run_inline("broken", small_golden)
    run = VerifyRun.objects.get(label="broken")
    assert run.status == RunStatus.ERROR and run.finished_at is not None

    roles_ensure()
    operator = User.objects.create_user("op", password="x")
    operator.groups.add(Group.objects.get(name="operator"))
    client.force_login(operator)
    page = client.get(f"/operators/runs/{run.pk}/").content.decode()
    assert "every 1s" not in page  # the page stops polling
    assert RUN_FAILED in page


def test_two_runs_compare_and_export(small_golden, client):
    first = run_inline("first", small_golden)
    second = run_inline("second", small_golden)
    rows = {row.figure: row for row in runs_compare(first, second)}
    assert rows["refusal_rate"].change == 0.0
    assert rows["unverified_claim_rate"].first == first.report["unverified_claim_rate"]

    exported = list(csv.DictReader(io.StringIO(run_csv(first))))
    assert len(exported) == 4 and {"code", "category", "verdict", "unverified", "answer"} <= set(exported[0])

    operator = User.objects.create_user("op", password="x")
    operator.groups.add(Group.objects.get(name="operator"))
    client.force_login(operator)
    page = client.get("/operators/runs/").content.decode()
    assert "<svg" in page and "Unverified claim rate across runs" in page
    compare = client.get(f"/operators/runs/compare/?first={first.pk}&second={second.pk}").content.decode()
    assert "first" in compare and "second" in compare and "+0.0 pp" in compare
    as_json = json.loads(client.get(f"/operators/runs/{first.pk}/export.json").content)
    assert as_json["report"]["questions"] == 4 and len(as_json["items"]) == 4


def test_the_run_page_polls_until_the_run_is_done(small_golden, client):
    run = verify_run_start(label="live", queue=False, golden_file=small_golden)
    operator = User.objects.create_user("op", password="x")
    operator.groups.add(Group.objects.get(name="operator"))
    client.force_login(operator)
    live = client.get(
        f"/operators/runs/{run.pk}/", headers={"HX-Request": "true", "HX-Target": f"run-{run.pk}"}
    )
    html = live.content.decode()
    assert 'hx-trigger="every 1s"' in html and 'value="0"' in html and "<html" not in html
    for item_id in run.items.values_list("pk", flat=True):
        verify_run_item(item_id=item_id)
    done = client.get(
        f"/operators/runs/{run.pk}/", headers={"HX-Request": "true", "HX-Target": f"run-{run.pk}"}
    )
    assert (
        "hx-trigger" not in done.content.decode()
        and "Unverified claim rate (headline)" in done.content.decode()
    )


def test_verify_all_command_prints_the_report(small_golden, capsys):
    call_command("verify_all", "--label", "cli", "--inline", "--golden", str(small_golden))
    out = capsys.readouterr().out
    assert "Verify-all 'cli'" in out and "Unverified claim rate" in out and "Per category" in out
    thresholds = (
        f"vector {settings.RETRIEVAL_VECTOR_THRESHOLD}, full text {settings.RETRIEVAL_TEXT_THRESHOLD}"
    )
    assert f"Refusal gate: {thresholds}, the settings' defaults (not calibrated for this garden)" in out
    assert VerifyRun.objects.get(label="cli").status == RunStatus.DONE


@pytest.mark.django_db(transaction=True)  # the run is queued when its transaction commits, as in production
def test_with_the_task_queue_unreachable_starting_a_run_says_so_and_leaves_a_failed_run(
    small_golden, client, monkeypatch
):
    from config.celery import app

    roles_ensure()

    # A broker on a port where nothing listens; fresh connection pools so the change takes effect.
    monkeypatch.setattr(app.conf, "broker_url", f"redis://127.0.0.1:{free_port()}/15")
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    monkeypatch.setattr("evaluation.starting.DEFAULT_FILE", small_golden)
    operator = User.objects.create_user("op", password="x")
    operator.groups.add(Group.objects.get(name="operator"))
    client.force_login(operator)

    response = client.post("/operators/runs/", {"label": "while Redis is away"}, follow=True)
    assert response.status_code == 200 and response.redirect_chain[-1][0] == "/operators/runs/"
    assert QUEUE_UNREACHABLE in response.content.decode()
    run = VerifyRun.objects.get(label="while Redis is away")
    assert run.status == RunStatus.ERROR and run.finished_at is not None
    assert set(run.items.values_list("status", flat=True)) == {"error"}


def test_a_run_says_how_many_answers_state_the_expected_fact_in_its_report_exports_and_pages(
    answered_golden, client, capsys
):
    first = run_inline("first", answered_golden)
    stored = {item.golden.code: item.answers_question for item in first.items.select_related("golden")}
    assert stored == {"g002": True, "w002": False, "g050": True}
    report = first.report
    assert report["answered_rate"] == 0.6667 and report["verified_claim_rate"] is not None
    assert report["per_category"]["single_fact"]["answered_rate"] == 0.5
    assert report["per_category"]["out_of_scope"]["answered_rate"] == 1.0

    # Decided when each item finished: editing the golden set later does not rewrite this run's figure.
    GoldenQuestion.objects.filter(code="w002").update(reference_answer="402 m")
    assert run_report(first).answered_rate == 0.6667

    call_command("verify_all", "--label", "second", "--inline", "--golden", str(answered_golden))
    out = capsys.readouterr().out
    assert "Answers stating the expected fact" in out and "66.7%" in out
    second = VerifyRun.objects.get(label="second")
    rows = {row.figure: row for row in runs_compare(first, second)}
    assert rows["answered_rate"] == FigureChange(
        figure="answered_rate",
        label="Answers stating the expected fact",
        first=0.6667,
        second=0.6667,
        change=0.0,
    )

    exported = {row["code"]: row for row in csv.DictReader(io.StringIO(run_csv(first)))}
    assert exported["g002"]["answers_question"] == "True" and exported["w002"]["answers_question"] == "False"

    # A run from before answers were checked has no such figure: its pages show a dash, the chart a gap.
    VerifyRun.objects.create(
        label="older", mode="local", status="done", report={"unverified_claim_rate": 0.2, "questions": 3}
    )
    operator = User.objects.create_user("op", password="x")
    operator.groups.add(Group.objects.get(name="operator"))
    client.force_login(operator)
    page = page_text(client.get(f"/operators/runs/{first.pk}/").content.decode())
    assert '<th scope="row">Answers stating the expected fact</th><td>66.7%</td>' in page
    single_fact = re.search(r'<th scope="row">single_fact</th>((?:<td>[^<]*</td>)+)', page)
    assert single_fact and re.findall(r"<td>([^<]*)</td>", single_fact.group(1))[4] == "50.0%"
    runs = client.get("/operators/runs/").content.decode()
    assert '<td data-label="Answers stating the fact" class="num">66.7%</td>' in runs
    assert "Answers stating the fact" in runs
    chart = runs[runs.index("<svg") : runs.index("</svg>")]
    assert "Unverified claim rate (lower is better)</text>" in chart
    assert "Answers stating the fact (higher is better)</text>" in chart  # the legend, in text
    assert "second: Answers stating the fact (higher is better) 66.7%" in chart
    assert "dashed line with squares" in runs  # the caption says which line is which without colour
    compare = page_text(
        client.get(f"/operators/runs/compare/?first={first.pk}&second={second.pk}").content.decode()
    )
    assert (
        '<th scope="row">Answers stating the expected fact</th><td data-label="First">66.7%</td>'
        '<td data-label="Second">66.7%</td><td data-label="Change">+0.0 pp</td>' in compare
    )


def test_a_runs_report_shows_the_refusal_rates_and_the_gate_that_made_them(small_golden, client, settings):
    from garden.models import Article, RetrievalCalibration
    from providers.embeddings import embedder

    run = run_inline("rates", small_golden)
    report = run.report
    assert (report["out_of_scope_refused"], report["in_scope_answered"], report["in_scope_refused"]) == (
        1,
        1,
        0,
    )
    assert report["refusal_gate"] == {
        "vector_threshold": settings.RETRIEVAL_VECTOR_THRESHOLD,
        "text_threshold": settings.RETRIEVAL_TEXT_THRESHOLD,
        "calibrated_at": None,
        "notes": Article.objects.live().count(),
    }
    operator = User.objects.create_user("op", password="x")
    operator.groups.add(Group.objects.get(name="operator"))
    client.force_login(operator)
    page = page_text(client.get(f"/operators/runs/{run.pk}/").content.decode())
    assert re.search(r"In-scope questions answered</th><td>100(\.0)?\s?%", page), page
    assert "the settings' defaults (not calibrated for this garden)" in page

    RetrievalCalibration.objects.create(
        vector_threshold=0.3, text_threshold=0.8, embedded_by=embedder(), golden="golden.yaml"
    )
    calibrated = run_inline("calibrated", small_golden)
    assert calibrated.report["refusal_gate"]["vector_threshold"] == 0.3
    page = page_text(client.get(f"/operators/runs/{calibrated.pk}/").content.decode())
    assert "at vector similarity 0.3 or full-text coverage 0.8" in page
    assert "calibrated for this garden on" in page


def run_of(verification: Verification) -> VerifyRun:
    """A finished run of one question, whose answer is `verification`'s, started in the panel's mode."""
    golden = GoldenQuestion.objects.create(code="judges-1", category="single_fact", question="Which claims?")
    run = VerifyRun.objects.create(label="judges", mode=JudgeMode.CASCADE, status=RunStatus.DONE, total=1)
    VerifyRunItem.objects.create(
        run=run, golden=golden, answer=verification.answer, status=RunItemStatus.DONE
    )
    run.report = run_report(run).as_dict()
    run.save()
    return run


def test_a_report_names_each_judge_that_voted_in_the_role_it_voted_in(client):
    verification = verification_with_claims(2)  # every claim voted on by `local` and by `claude-test`
    claim = verification.claims.get(ordinal=2)
    Vote.objects.create(
        claim=claim, judge="claude-big", role=JurorRole.TIEBREAKER, status=claim.status, confidence=0.8
    )
    run = run_of(verification)

    report = report_shown(run)
    assert report is not None and report.judges == [
        JudgeRan(judge="local", role="juror", claims=2),
        JudgeRan(judge="claude-test", role="juror", claims=2),
        JudgeRan(judge="claude-big", role="tiebreaker", claims=1),
    ]
    named = "local judge, Claude juror (claude-test), Claude tie-breaker (claude-big)"
    assert report.judges_named == named
    login(client, "operator")
    assert f"Judges that ran: {named} ·" in client.get(f"/operators/runs/{run.pk}/").content.decode()


def test_a_report_stored_before_judges_were_recorded_names_them_from_the_votes(client):
    verification = verification_with_claims(1)
    Vote.objects.filter(claim__verification=verification).exclude(judge="local").delete()
    run = run_of(verification)
    del run.report["judges"]  # as every run finished before this release stored it
    run.save()

    login(client, "operator")
    page = client.get(f"/operators/runs/{run.pk}/").content.decode()
    assert "Judges that ran: local judge ·" in page and JudgeMode.CASCADE.label not in page
    exported = client.get(f"/operators/runs/{run.pk}/export.json").json()
    assert exported["report"]["judges"] == [{"judge": "local", "role": "juror", "claims": 1}]
    assert exported["mode"] == JudgeMode.CASCADE  # the mode configured, as the export always gave it


def test_a_run_without_a_claim_says_no_judge_voted():
    golden = GoldenQuestion.objects.create(code="none-1", category="out_of_scope", question="Sourdough?")
    run = VerifyRun.objects.create(label="none", mode=JudgeMode.LOCAL, status=RunStatus.DONE, total=1)
    VerifyRunItem.objects.create(run=run, golden=golden, status=RunItemStatus.ERROR)
    assert run_report(run).judges_named == NO_JUDGE


def test_tasks_queued_before_evaluation_was_an_app_still_find_their_task():
    """A Verify-all item or a retraining queued by the previous release names the task as the verifier did."""
    from config.celery import app

    app.loader.import_default_modules()
    assert {"verifier.tasks.verify_golden_item", "verifier.tasks.retrain_judge"} <= set(app.tasks)


def test_a_run_gives_the_share_of_readers_answers_marked_unhelpful_since_the_run_before(
    small_golden, client, capsys
):
    from django.contrib.auth.models import AnonymousUser

    from garden.answering.asking import question_ask
    from verifier.marks import answer_mark_record

    def mark(answer, marker, *, helpful):
        answer_mark_record(answer=answer, marker=marker, user=AnonymousUser(), helpful=helpful)

    tunnel, river = (question_ask(text=q) for q in ("How long is Cold Knap Tunnel?", "Who built River Kest?"))
    mark(tunnel, "session:a", helpful=False)
    mark(tunnel, "session:b", helpful=True)  # one reader's "no" is enough to count it unhelpful
    mark(river, "session:a", helpful=True)
    question_ask(text="Who built River Kest?")  # unmarked: not counted either way
    first = run_inline("first", small_golden)
    assert first.report["readers_marks"] == {"since": None, "unhelpful": 1, "marked": 2}

    # Since the first run: a reader's answer marked unhelpful counts, Verify-all's own answer does not.
    mark(question_ask(text="How long is Cold Knap Tunnel?"), "session:c", helpful=False)
    mark(first.items.exclude(answer=None).first().answer, "session:c", helpful=False)
    call_command("verify_all", "--label", "second", "--inline", "--golden", str(small_golden))
    second = VerifyRun.objects.get(label="second")
    assert second.report["readers_marks"] == {
        "since": first.started_at.isoformat(),
        "unhelpful": 1,
        "marked": 1,
    }
    assert "Readers marked unhelpful: 1 of the 1 answers they marked since the run before (100.0%)" in (
        capsys.readouterr().out
    )
    operator = User.objects.create_user("op", password="x")
    operator.groups.add(Group.objects.get(name="operator"))
    client.force_login(operator)
    page = page_text(client.get(f"/operators/runs/{first.pk}/").content.decode())
    assert re.search(
        r"Readers' marks</strong> since the first answer: answers marked unhelpful: 1 of 2 \(50(\.0)?\s?%\)",
        page,
    ), page


def test_a_run_counts_abstentions_and_an_unanswerable_question_abstained_on_as_answered(tmp_path):
    entries = {e["id"]: e for e in yaml.safe_load(DEFAULT_FILE.read_text())}
    # D2187's colour, which its note never gives; the tunnel's length, which its note does.
    path = tmp_path / "golden.yaml"
    path.write_text(yaml.safe_dump([entries["g083"], entries["g002"]]))
    run = run_inline("abstaining", path)
    items = {item.golden.code: item for item in run.items.select_related("golden", "answer")}
    assert items["g083"].answer.abstained and items["g083"].answers_question is True
    assert not items["g002"].answer.abstained and items["g002"].answers_question is True
    report = run.report
    assert (
        report["abstention_rate"] == 0.5 and report["per_category"]["unanswerable"]["abstention_rate"] == 1.0
    )
    # Neither scope's refusal figures count it: it is in scope only for the tunnel.
    assert report["in_scope_refused"] == 0.0 and report["in_scope_answered"] == 1.0
    rows = list(csv.DictReader(io.StringIO(run_csv(run))))
    assert {row["code"]: row["abstained"] for row in rows} == {"g083": "True", "g002": "False"}
    said = {row["code"]: row["answers_question_label"] for row in rows}
    assert said == {"g083": "Does not answer the question", "g002": "Answers the question"}
