"""Every page and API endpoint against every role: anonymous (asking allowed or not), reader, editor, operator."""

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command

from dashboard.actions.checking import CHECK_FORBIDDEN
from evaluation.models import VerifyRun
from garden.models import Answer, Generator, Question, Retrieval
from tests.factories import STATION_QUOTE, verified_by_claude
from verifier.models import Claim, Spend, Verification, VerificationStatus
from verifier.roles import EDITOR, OPERATOR, READER

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", READER, EDITOR, OPERATOR]


@pytest.fixture
def objects():
    question = Question.objects.create(
        text="When did Ashcombe station reopen?",
        preflight_domain="factual",
        preflight_risk="HIGH",
        preflight_suggestion="-",
    )
    Retrieval.objects.create(question=question)
    answer = Answer.objects.create(
        question=question, text="It reopened in 1990.", generator=Generator.EXTRACTIVE
    )
    verification = Verification.objects.create(
        answer=answer, status=VerificationStatus.DONE, risk_score=70, risk_label="⚠", verdict="hallucinating"
    )
    claim = Claim.objects.create(
        verification=verification,
        ordinal=0,
        text="It reopened in 1990.",
        start=0,
        end=20,
        status="contradicted",
    )
    run = VerifyRun.objects.create(label="baseline", mode="local", status="done", report={})
    return {"answer": answer.public_id, "claim": claim.pk, "run": run.pk}


def client_for(client, role):
    if role != "anonymous":
        user = User.objects.create_user(role, password="pw-not-used", is_staff=role != READER)
        user.groups.add(Group.objects.get(name=role))
        client.force_login(user)
    return client


# (method, url template, data, expected code per role: anonymous, reader, editor, operator)
ASK = {"anonymous": 200, READER: 200, EDITOR: 200, OPERATOR: 200}
EDITORS = {"anonymous": 302, READER: 403, EDITOR: 200, OPERATOR: 200}
OPERATORS = {"anonymous": 302, READER: 403, EDITOR: 403, OPERATOR: 200}
PUBLIC = dict.fromkeys(ROLES, 200)
MATRIX = [
    ("get", "/", None, ASK),
    ("get", "/answers/{answer}/", None, ASK),
    ("get", "/answers/{answer}/verdict/", None, {r: 302 for r in ROLES}),  # no htmx: back to the answer page
    ("get", "/articles/", None, PUBLIC),
    ("get", "/articles/station-ashcombe/", None, PUBLIC),
    ("get", "/topics/stations/", None, PUBLIC),
    ("get", "/accounts/login/", None, PUBLIC),
    ("get", "/accounts/tokens/", None, {**PUBLIC, "anonymous": 302}),  # any signed-in user's own tokens
    ("get", "/api/openapi.json", None, PUBLIC),
    ("get", "/api/answers/{answer}", None, ASK),
    ("get", "/api/answers/{answer}/verdict", None, ASK),
    ("post", "/api/check", {"text": "Ashcombe station reopened in 1990."}, {**ASK, "anonymous": 403}),
    ("get", "/review/", None, EDITORS),
    (
        "post",
        "/review/claims/{claim}/decide/",
        {"decision": "judge_right"},
        {"anonymous": 302, READER: 403, EDITOR: 302, OPERATOR: 302},
    ),
    ("get", "/operators/runs/", None, OPERATORS),
    ("get", "/operators/runs/{run}/", None, OPERATORS),
    ("get", "/operators/runs/compare/?first={run}&second={run}", None, OPERATORS),
    ("get", "/operators/runs/{run}/export.csv", None, OPERATORS),
    ("get", "/operators/runs/{run}/export.json", None, OPERATORS),
    ("get", "/operators/logs/", None, OPERATORS),
    ("get", "/admin/", None, {"anonymous": 302, READER: 302, EDITOR: 200, OPERATOR: 200}),
]


@pytest.mark.parametrize("role", ROLES)
def test_every_view_checks_its_permission(client, objects, role):
    client = client_for(client, role)
    for method, url, data, expected in MATRIX:
        path = url.format(**objects)
        if method == "get":
            response = client.get(path)
        elif path.startswith("/api/"):
            response = client.post(path, data, content_type="application/json")
        else:
            response = client.post(path, data)
        assert response.status_code == expected[role], f"{role} {method.upper()} {path}"


@pytest.mark.parametrize("role", ROLES)
def test_when_anonymous_asking_is_off_only_readers_and_above_may_ask(client, objects, settings, role):
    settings.ANONYMOUS_CAN_ASK = False
    client = client_for(client, role)
    allowed = role != "anonymous"
    page = client.get("/")
    assert page.status_code == (200 if allowed else 302)
    api = client.post(
        "/api/ask", {"question": "When did Ashcombe station reopen?"}, content_type="application/json"
    )
    assert api.status_code == (200 if allowed else 403)
    assert client.get(f"/api/answers/{objects['answer']}").status_code == (200 if allowed else 403)
    assert client.post("/api/check", {"text": "x y z"}, content_type="application/json").status_code in (
        {200} if allowed else {403}
    )


def test_demo_accounts_are_created_only_in_debug(settings, capsys):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="DEBUG is off"):
        call_command("create_demo_accounts")
    assert not User.objects.exists()
    settings.DEBUG = True
    call_command("create_demo_accounts")
    out = capsys.readouterr().out
    for role in (READER, EDITOR, OPERATOR):
        user = User.objects.get(username=role)
        password = out.split(f"{role}")[1].split("password: ")[1].split()[0]
        assert user.check_password(password) and user.groups.filter(name=role).exists()


def test_anonymous_fact_checks_are_refused_by_default_with_a_clear_message(client):
    response = client.post("/api/check", {"text": "Ashcombe station reopened in 1990."}, "application/json")
    assert response.status_code == 403 and response.json() == {"error": CHECK_FORBIDDEN}


def test_anonymous_fact_checks_when_allowed_use_the_local_judge_only(client, claude, settings):
    settings.ANONYMOUS_CAN_CHECK = True
    claude.set_default(verified_by_claude(STATION_QUOTE))
    anonymous = client.post("/api/check", {"text": STATION_QUOTE}, "application/json")
    assert anonymous.status_code == 200 and anonymous.json()["claims"]
    assert " · local judge · " in anonymous.json()["compact"]  # and its compact line says so
    assert claude.request_count == 0 and not Spend.objects.exists()

    client_for(client, READER)
    assert client.post("/api/check", {"text": STATION_QUOTE}, "application/json").status_code == 200
    assert claude.request_count >= 1 and Spend.objects.exists()  # a reader's check runs the panel
