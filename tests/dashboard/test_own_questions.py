"""A reader's questions are theirs: unguessable answer addresses, and a home page of one's own questions."""

import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from evaluation.models import VerifyRun
from garden.models import Answer
from tests.factories import login, verification_with_claims

pytestmark = pytest.mark.django_db

MINE = "When did Ashcombe station reopen?"
THEIRS = "How long is the Harrowden Viaduct?"


def reader(name: str) -> Client:
    client = Client()
    user = User.objects.create_user(name, password="x")
    user.groups.add(Group.objects.get(name="reader"))
    client.force_login(user)
    return client


def test_an_answer_lives_at_a_random_address_and_its_numeric_id_is_not_found(client):
    body = client.post("/api/ask", {"question": MINE}, content_type="application/json").json()
    answer = Answer.objects.get()
    assert body["answer_id"] == str(answer.public_id)
    assert re.fullmatch(r"/answers/[0-9a-f-]{36}/", answer.get_absolute_url())

    assert client.get(answer.get_absolute_url()).status_code == 200
    assert client.get(f"/api/answers/{answer.public_id}").json()["answer"] == answer.text
    assert client.get(f"/api/answers/{answer.public_id}/verdict").status_code == 200
    for old in (f"/answers/{answer.pk}/", f"/answers/{answer.pk}/verdict/"):
        assert client.get(old, headers={"HX-Request": "true"}).status_code == 404, old
    for old in (f"/api/answers/{answer.pk}", f"/api/answers/{answer.pk}/verdict"):
        response = client.get(old)
        assert response.status_code == 404 and response.json() == {"error": "No answer with this id."}, old


def test_two_answers_never_share_an_address():
    for question in (MINE, THEIRS):
        Client().post("/", {"question": question})
    assert len({answer.public_id for answer in Answer.objects.all()}) == 2


def test_the_home_page_lists_only_the_readers_own_questions():
    me, someone = reader("me"), reader("someone")
    me.post("/", {"question": MINE})
    someone.post("/", {"question": THEIRS})

    mine = me.get("/").content.decode()
    assert MINE in mine and THEIRS not in mine
    assert Answer.objects.get(question__text=MINE).get_absolute_url() in mine
    theirs = someone.get("/").content.decode()
    assert THEIRS in theirs and MINE not in theirs
    assert MINE not in Client().get("/").content.decode()  # a visitor who is not logged in


def test_an_anonymous_visitor_sees_this_sessions_questions_and_no_other_sessions(settings):
    settings.ANONYMOUS_CAN_ASK = True
    mine, other = Client(), Client()
    mine.post("/", {"question": MINE})
    other.post("/", {"question": THEIRS}, headers={"HX-Request": "true"})

    page = mine.get("/").content.decode()
    assert MINE in page and THEIRS not in page
    page = other.get("/").content.decode()
    assert THEIRS in page and MINE not in page
    assert MINE not in reader("later").get("/").content.decode()


def test_operators_still_see_every_answer_on_the_logs_page(client):
    reader("me").post("/", {"question": MINE})
    Client().post("/", {"question": THEIRS})
    login(client, "operator")
    logs = client.get("/operators/logs/").content.decode()
    for answer in Answer.objects.all():
        assert answer.get_absolute_url() in logs


def test_verify_all_reports_link_their_answers_by_their_address(client):
    answer = verification_with_claims(1).answer
    claim = {"code": "q1", "category": "single_fact", "question": "Q?", "answer": answer.text, "claim": "C."}
    report = {
        "unverified_claims": [{**claim, "answer_id": answer.pk, "answer_url": answer.get_absolute_url()}]
    }
    run = VerifyRun.objects.create(label="new", mode="local", status="done", report=report)
    # A report stored before answers had addresses of their own names only the numeric id: no link, no error.
    old = VerifyRun.objects.create(
        label="old",
        mode="local",
        status="done",
        report={"unverified_claims": [{**claim, "answer_id": answer.pk}]},
    )
    login(client, "operator")
    page = client.get(f"/operators/runs/{run.pk}/").content.decode()
    assert f'<a href="{answer.get_absolute_url()}">the answer</a>' in page
    page = client.get(f"/operators/runs/{old.pk}/")
    assert page.status_code == 200 and f"/answers/{answer.pk}/" not in page.content.decode()


@pytest.fixture
def source_withheld_meanwhile(monkeypatch):
    """The note an answer quotes turns private between the answer's writing and its first showing."""
    from django.utils import timezone

    from dashboard.actions import asking
    from dashboard.actions.asking import ask as real_ask

    def ask_then_withhold(question, user, claude_slot=None, conversation=None):
        answer = real_ask(question, user, claude_slot, conversation)
        articles = {source.passage.article for source in answer.sources.all()}
        for article in articles:
            article.withheld_at = timezone.now()
            article.save(update_fields=["withheld_at"])
        return answer

    monkeypatch.setattr(asking, "ask", ask_then_withhold)  # (every surface asks through the one action)


def test_an_answer_whose_source_is_withheld_meanwhile_is_not_shown_on_any_path(
    client, source_withheld_meanwhile
):
    from garden.selectors import ANSWER_NOT_SHARED

    response = client.post("/api/ask", {"question": MINE}, content_type="application/json")
    assert response.status_code == 404 and response.json() == {"error": ANSWER_NOT_SHARED}

    htmx = client.post("/", {"question": THEIRS}, headers={"HX-Request": "true"})
    answer = Answer.objects.get(question__text=THEIRS)
    assert htmx.status_code == 200 and htmx["HX-Redirect"] == answer.get_absolute_url()
    assert THEIRS not in htmx.content.decode() and answer.text not in htmx.content.decode()
    assert client.get(answer.get_absolute_url()).status_code == 404
