"""Claude's abstention on every face: a reply that the notes do not say (`NOT IN THE NOTES`) is stored and shown as
the fixed abstention, naming the notes it looked in (those its reader may see) and listing them as its sources,
with nothing to check; streamed, the model's words never show. A reply that merely begins with "Not" is an
answer like any other."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from dashboard.actions.callers import account_request
from dashboard.mcp_server import NOTHING_TO_CHECK, GardenTools
from garden.answering.synthesis import ABSTAINS, ABSTENTION_SUBJECTS, SourceText, abstention_text
from garden.audiences import members_add
from garden.models import Answer, Article, Generator
from tests.dashboard.test_streaming import events_of, stream_ask, words_then_answer
from tests.factories import login
from tests.fakes.messages_api import FakeMessagesAPI, reply_text
from verifier.logs import DOES_NOT_ANSWER as NOT_ANSWERING
from verifier.models import Verification
from verifier.roles import READER
from verifier.selectors import ANSWERS_QUESTION, DOES_NOT_ANSWER

pytestmark = pytest.mark.django_db

QUESTION = "Who painted the footbridge at Ashcombe station?"


def reader(name: str) -> tuple[Client, User]:
    user = User.objects.create_user(name, password="x")
    user.groups.add(Group.objects.get(name=READER))
    client = Client()
    client.force_login(user)
    return client, user


def api_ask(client: Client, question: str = QUESTION, **extra: Any) -> dict[str, Any]:
    response = client.post("/api/ask", {"question": question, **extra}, content_type="application/json")
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def named_in(answer: Answer) -> list[str]:
    """The notes an abstention names: its sources' notes in their order, as many as it names."""
    titles = [s.passage.article.title for s in answer.sources.order_by("number")]
    return list(dict.fromkeys(titles))[:ABSTENTION_SUBJECTS]


def assert_abstained(payload: dict[str, Any]) -> Answer:
    """The payload (the API's, the MCP tool's or `ask --json`'s) is the stored abstention: the fixed text naming
    the notes it looked in, the sources listed, no claims to check."""
    stored = Answer.objects.get(public_id=payload["answer_id"])
    assert stored.abstained and stored.generator == Generator.CLAUDE and not stored.failed
    assert payload["abstained"] is True and payload["refused"] is False
    assert payload["answers_question"] is False and payload["answers_question_label"] == DOES_NOT_ANSWER
    assert payload["citations"] and payload["sources"]  # the nearest passages, listed
    sources = [SourceText(s.number, s.passage.cited_as, "") for s in stored.sources.order_by("number")]
    assert payload["answer"] == stored.text == abstention_text(sources)
    assert all(title in stored.text for title in named_in(stored))
    assert "NOT IN THE NOTES" not in stored.text.upper()
    assert not Verification.objects.filter(answer=stored).exists()  # nothing to check
    assert payload["verification"]["status"] is None
    return stored


@pytest.mark.parametrize("reply", ["NOT IN THE NOTES", "not in the notes.", "  Not In The Notes!\n"])
def test_claudes_abstention_through_the_api_is_stored_and_shown_as_the_abstention(
    client: Client, claude: FakeMessagesAPI, reply: str
) -> None:
    claude.reply_text(reply)
    me, _ = reader("me")
    payload = api_ask(me)
    stored = assert_abstained(payload)
    assert claude.request_count == 1  # the answer's call; no judge is called for it
    assert me.get(f"/api/answers/{payload['answer_id']}").json() == payload
    verdict = me.get(f"/api/answers/{payload['answer_id']}/verdict").json()
    assert verdict["status"] is None and verdict["answers_question"] is False
    assert verdict["answers_question_label"] == DOES_NOT_ANSWER

    page = me.get(stored.get_absolute_url()).content.decode()
    assert 'class="banner abstained"' in page and f"{DOES_NOT_ANSWER}." in page
    assert "✓" not in page


def test_claudes_abstention_through_the_mcp_ask_and_verdict_tools(claude: FakeMessagesAPI) -> None:
    claude.reply_text("NOT IN THE NOTES.")
    _, agent = reader("agent")
    tools = GardenTools(account_request(agent))
    payload = tools.ask(QUESTION)
    assert_abstained(payload)
    assert payload["verdict"]["wait"] == NOTHING_TO_CHECK and payload["verdict"]["answers_question"] is False
    verdict = tools.verdict(payload["answer_id"])
    assert verdict["status"] is None and verdict["answers_question_label"] == DOES_NOT_ANSWER


def test_claudes_abstention_through_ask_json_and_its_text(
    claude: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    claude.reply_text("NOT IN THE NOTES")
    call_command("ask", QUESTION, "--json")
    assert_abstained(json.loads(capsys.readouterr().out))

    claude.reply_text("not in the notes.")
    call_command("ask", QUESTION)
    out = capsys.readouterr().out
    stored = Answer.objects.order_by("-pk").first()
    assert stored is not None and stored.abstained
    assert f"{DOES_NOT_ANSWER.upper()}: the notes near it do not say." in out and stored.text in out


def test_a_streamed_abstention_never_shows_the_models_words(client: Client, claude: FakeMessagesAPI) -> None:
    claude.streamed("NOT IN THE NOTES.")
    me, _ = reader("me")
    words, payload = words_then_answer(events_of(stream_ask(me, QUESTION).streaming_content))
    stored = assert_abstained(payload)
    # No delta is the model's abstention, nor the start of it ("NOT", "NOT IN").
    assert not any("NOT IN" in word.upper() or ABSTAINS.startswith(word.strip().upper()) for word in words)
    assert words[-1] == stored.text and "".join(words) == stored.text


def test_a_streamed_answer_that_begins_with_not_streams_and_is_stored_as_written(
    client: Client, claude: FakeMessagesAPI
) -> None:
    written = "Not until 1902 [1]. The cast-iron footbridge dates from then [1]."
    claude.streamed(written)
    me, _ = reader("me")
    words, payload = words_then_answer(events_of(stream_ask(me, QUESTION).streaming_content))
    assert len(words) > 3 and "".join(words) == written == payload["answer"]
    assert payload["abstained"] is False and payload["answers_question"] is True
    assert payload["answers_question_label"] == ANSWERS_QUESTION
    stored = Answer.objects.get(public_id=payload["answer_id"])
    assert (
        stored.text == written
        and not stored.abstained
        and Verification.objects.filter(answer=stored).exists()
    )

    claude.reply_text("Not until 1902 [1].")  # and not streamed
    assert api_ask(me)["answer"] == "Not until 1902 [1]."


CONDENSED = "Who built Ashcombe station?"


def test_a_follow_up_abstains_in_its_conversation_alike(client: Client, claude: FakeMessagesAPI) -> None:
    me, _ = reader("me")
    claude.reply_text("Ashcombe is the southern terminus of the railway [1].")
    first = api_ask(me, "Where is Ashcombe station?")
    # Claude condenses the follow-up (a call of its own), then says the notes do not say.
    claude.reply_text(CONDENSED).reply_text("NOT IN THE NOTES")
    follow_up = api_ask(me, "Who built it?", conversation=first["conversation"])
    assert follow_up["conversation"] == first["conversation"] and follow_up["turn"] == 2
    assert follow_up["searched_for"] == CONDENSED
    assert_abstained(follow_up)

    claude.reply_text(CONDENSED).streamed("NOT IN THE NOTES")
    streamed = stream_ask(me, "Who built it?", conversation=first["conversation"])
    words, third = words_then_answer(events_of(streamed.streaming_content))
    assert third["turn"] == 3 and "".join(words) == assert_abstained(third).text


def test_an_abstention_names_only_notes_its_reader_may_see(claude: FakeMessagesAPI) -> None:
    station = Article.objects.get(slug="station-ashcombe")
    Article.objects.filter(pk=station.pk).update(audiences=["hr"])
    member, _ = reader("member")
    members_add("hr", ["member"])
    outsider, _ = reader("outsider")

    claude.set_default(reply_text("NOT IN THE NOTES"))
    theirs = assert_abstained(api_ask(member))
    assert station.title in theirs.text  # their nearest note, named
    mine = assert_abstained(api_ask(outsider))
    assert station.title not in mine.text
    shown = outsider.get(f"/api/answers/{mine.public_id}").json()
    assert station.slug not in {item["article"] for item in shown["citations"] + shown["sources"]}
    # Claude was never shown the note either.
    assert f'title="{station.title}"' not in claude.requests[-1]["body"]["messages"][0]["content"]
    assert f'title="{station.title}"' in claude.requests[0]["body"]["messages"][0]["content"]


def test_the_logs_show_an_abstention_as_one_and_list_it_with_the_answers_that_do_not_answer(
    client: Client, claude: FakeMessagesAPI
) -> None:
    claude.reply_text("NOT IN THE NOTES")
    me, _ = reader("me")
    stored = assert_abstained(api_ask(me))
    login(client, "operator")
    logs = client.get("/operators/logs/", {"verdict": NOT_ANSWERING}).content.decode()
    row = logs[logs.index(stored.get_absolute_url()) :]
    assert '<span class="does-not-answer">abstained</span>' in row[: row.index("</tr>")]
    assert (
        stored.get_absolute_url()
        not in client.get("/operators/logs/", {"verdict": "grounded"}).content.decode()
    )
