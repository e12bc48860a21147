"""Without a key only the local judge runs, and its verdict is the label wherever a reader or an operator looks:
the page, the API, `ask --json`, `check_text`, Verify-all and the logs. `?` is kept for a check no judge finished
(tests/verifier/test_judge_faults.py, a judge that crashes)."""

import json

import pytest
from django.core.management import call_command

from claimcheck.terms import JudgeMode, RiskLabel
from evaluation.models import VerifyRun
from tests.factories import login, verify_station_answer
from verifier.models import Verification
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

SOURCE = "The Eiffel Tower opened in Paris in 1889."
CONFIGURED_PANEL = JudgeMode.CASCADE.label  # "Panel: local and Claude jurors, Claude tie-breaker"


@pytest.fixture
def keyless(settings):
    settings.ANTHROPIC_API_KEY = ""
    settings.VERIFIER_MODE = "cascade"  # Claude is asked for, and cannot run


def test_the_local_verdict_labels_the_page_the_api_and_the_logs(keyless, client):
    verification = verify_station_answer()  # one claim, verified by the local judge with its quote
    assert verification.local_only and verification.verdict == "grounded"
    assert verification.risk_label == RiskLabel.GROUNDED and (verification.risk_score or 100) <= 20
    assert verification.compact == f"[Hall: ✓ · {verification.risk_score}/100 · local judge · 0 flags]"

    page = client.get(verification.answer.get_absolute_url()).content.decode()
    assert "✓ grounded" in page and verification.compact in page
    assert "Only the weaker local judge ran" in page  # the disclosure stays
    assert "judge unavailable" not in page

    body = client.get(f"/api/answers/{verification.answer.public_id}/verdict").json()
    assert (body["risk_label"], body["compact"]) == ("✓", verification.compact) and body["local_only"]
    assert body["disclosure"].startswith("Only the weaker local judge ran")

    login(client, "operator")
    logs = client.get("/operators/logs/").content.decode()
    assert f"✓ {verification.risk_score}/100" in logs and "(local only)" in logs


def test_check_text_and_ask_json_give_the_local_verdict_too(keyless, tmp_path, capsys, monkeypatch):
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    items = [
        {"id": "right", "source": SOURCE, "text": "The Eiffel Tower opened in Paris in 1889."},
        {"id": "wrong", "source": SOURCE, "text": "The Eiffel Tower opened in Madrid in 1923."},
    ]
    source.write_text("".join(json.dumps(item) + "\n" for item in items))
    call_command("check_text", "--jsonl", str(source), "--out", str(out), "--judge", "cascade")
    right, wrong = (json.loads(line) for line in out.read_text().splitlines())
    assert (right["verdict"], right["risk_label"]) == ("grounded", "✓") and right["risk_score"] <= 20
    assert (wrong["verdict"], wrong["risk_label"]) == ("hallucinating", "⚠") and wrong["risk_score"] >= 51

    def worker_finishes_meanwhile(seconds: float) -> None:
        for pending in Verification.objects.filter(status="pending"):
            verification_run(verification_id=pending.pk)

    monkeypatch.setattr("dashboard.management.commands.ask.time.sleep", worker_finishes_meanwhile)
    call_command("ask", "How long is Harrowden Viaduct?", "--wait", "--json")
    asked = json.loads(capsys.readouterr().out)["verification"]
    assert asked["status"] == "done" and asked["local_only"] and asked["risk_label"] in {"✓", "~", "⚠"}
    assert " · local judge · " in asked["compact"]


def test_a_verify_all_run_without_a_key_has_no_question_marks_and_names_the_local_judge(
    keyless, small_golden, client, capsys
):
    call_command("verify_all", "--label", "keyless", "--inline", "--golden", str(small_golden))
    run = VerifyRun.objects.get(label="keyless")
    labels = set(
        Verification.objects.filter(answer__in=run.items.values("answer")).values_list(
            "risk_label", flat=True
        )
    )
    assert labels and RiskLabel.UNAVAILABLE not in labels

    # The judges that voted, not the mode configured (cascade), wherever the operator reads the run.
    assert "Judges that ran: local judge\n" in capsys.readouterr().out
    login(client, "operator")
    page = client.get(f"/operators/runs/{run.pk}/").content.decode()
    assert "Judges that ran: local judge ·" in page and CONFIGURED_PANEL not in page
    exported = client.get(f"/operators/runs/{run.pk}/export.json").json()
    assert [(judge["judge"], judge["role"]) for judge in exported["report"]["judges"]] == [("local", "juror")]
