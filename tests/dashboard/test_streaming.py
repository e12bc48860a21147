"""`POST /api/ask` with `stream: true`: the answer's words arrive as they are written, the stored answer is what
was streamed, and a stream that breaks leaves an answer that says what happened, with the budget settled at
what was billed."""

from __future__ import annotations

import html
import json
import os
import re
import socket
import struct
import sys
import time
import traceback
from collections.abc import Iterator
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

import pytest
from django.db.backends.base.base import BaseDatabaseWrapper
from django.http import StreamingHttpResponse
from django.test import Client
from django.utils import timezone

from dashboard.claude_slots import CLAUDE_BUSY, claude_slot
from dashboard.conversations import STREAM_GONE
from dashboard.streams import sse_event
from garden.answering.asking import REFUSAL_TEXT
from garden.answering.synthesis.claude import (
    CUT_OFF_REPLY,
    READER_LEFT,
    STREAM_BROKEN,
    STREAM_LOST,
    STREAM_TOO_LONG,
)
from garden.models import Answer, Article
from garden.readers import reader_of
from garden.selectors import ANSWER_NOT_SHARED
from providers.claude import DEFAULT_PRICES, cost_usd
from tests.factories import login
from tests.fakes.messages_api import FakeMessagesAPI
from verifier.budget import spent_today
from verifier.models import Spend, SpendPurpose, Verification

pytestmark = pytest.mark.django_db

QUESTION = "How long is the Harrowden Viaduct and how many arches does it have?"
OUT_OF_SCOPE = "How do I bake sourdough bread at home?"
WRITTEN = "The viaduct is 196 m long [1]. It has twenty-one arches [2]."


def stream_ask(client: Client, question: str = QUESTION, **extra: Any) -> StreamingHttpResponse:
    response = client.post(
        "/api/ask", {"question": question, "stream": True, **extra}, content_type="application/json"
    )
    assert isinstance(response, StreamingHttpResponse), response.content
    return response


def events_of(chunks: Any) -> list[tuple[str, Any]]:
    """(name, parsed data) of each Server-Sent Event in `chunks`."""
    text = b"".join(chunks).decode()
    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        lines = block.split("\n")
        name = lines[0].removeprefix("event: ")
        data = "\n".join(line.removeprefix("data: ") for line in lines[1:])
        events.append((name, json.loads(data)))
    return events


def leave(response: StreamingHttpResponse) -> None:
    """Close the response as the server does when the reader's connection is gone (keeping the test's database
    connection open, as Django's test client does when it closes a response)."""
    with mock.patch.object(BaseDatabaseWrapper, "close_if_unusable_or_obsolete"):
        response.close()


def words_then_answer(events: list[tuple[str, Any]]) -> tuple[list[str], Any]:
    *deltas, (last, answer) = events
    assert last == "answer" and all(name == "delta" for name, _ in deltas)
    return [data["text"] for _, data in deltas], answer


def test_an_event_is_framed_a_data_line_a_line() -> None:
    assert sse_event("delta", '{"text": "a"}') == 'event: delta\ndata: {"text": "a"}\n\n'
    assert sse_event("answer", "<li>\n</li>") == "event: answer\ndata: <li>\ndata: </li>\n\n"


def test_a_streamed_answer_arrives_in_pieces_and_is_stored_as_it_was_streamed(
    client: Client, claude: FakeMessagesAPI, settings
) -> None:
    claude.streamed(WRITTEN, input_tokens=2_000, output_tokens=100)
    login(client, "reader")
    response = stream_ask(client)
    assert response["Content-Type"] == "text/event-stream"
    words, answer = words_then_answer(events_of(response.streaming_content))

    stored = Answer.objects.get()
    assert len(words) > 5 and "".join(words) == stored.text == answer["answer"] == WRITTEN
    # A citation is sent whole, never as "[1" then "]": the page can link it as it arrives.
    assert "[1]." in " ".join(words) and not any(word.rstrip().endswith("[1") for word in words)
    assert answer["answer_id"] == str(stored.public_id) and answer["generator"] == "claude"
    assert (
        answer["verification"]["status"] == "pending" and Verification.objects.filter(answer=stored).exists()
    )
    [spend] = Spend.objects.all()
    billed = cost_usd(settings.CLAUDE_ANSWER_MODEL, 2_000, 100, DEFAULT_PRICES)
    assert spend.settled and (spend.input_tokens, spend.output_tokens, spend.cost_usd) == (2_000, 100, billed)
    assert stored.cost_usd == billed == spent_today()
    assert claude.last_request["body"]["stream"] is True


def test_a_refusal_streams_its_text_at_once_without_calling_claude(
    client: Client, claude: FakeMessagesAPI
) -> None:
    login(client, "reader")
    words, answer = words_then_answer(events_of(stream_ask(client, OUT_OF_SCOPE).streaming_content))
    assert words == [REFUSAL_TEXT] and answer["refused"] is True and answer["answer"] == REFUSAL_TEXT
    assert claude.request_count == 0 and not Spend.objects.exists() and spent_today() == 0
    assert not Verification.objects.exists()


def test_a_follow_up_streams_in_its_conversation(client: Client, claude: FakeMessagesAPI) -> None:
    claude.streamed(WRITTEN)
    login(client, "reader")
    _, first = words_then_answer(events_of(stream_ask(client).streaming_content))
    # Claude condenses the follow-up (a call of its own, not streamed), then writes its answer.
    claude.reply_text("When did the Harrowden Viaduct open?").streamed("It opened in 1874 [1].")
    more = stream_ask(client, "When did it open?", conversation=first["conversation"])
    words, second = words_then_answer(events_of(more.streaming_content))
    assert second["conversation"] == first["conversation"] and second["turn"] == 2
    assert "".join(words) == second["answer"] == "It opened in 1874 [1]."


@pytest.mark.parametrize(
    ("break_with", "message"),
    [("error", STREAM_BROKEN), ("drop", STREAM_LOST)],
    ids=["error-event", "dropped"],
)
def test_a_stream_that_breaks_mid_answer_is_stored_saying_so_and_settled_at_what_was_billed(
    client: Client, claude: FakeMessagesAPI, settings, break_with: str, message: str
) -> None:
    claude.streamed(WRITTEN, input_tokens=2_000, break_after=4, break_with=break_with)
    login(client, "reader")
    words, answer = words_then_answer(events_of(stream_ask(client).streaming_content))

    assert "".join(words) == "The viaduct is 196"  # what was written before the break reached the reader
    stored = Answer.objects.get()
    assert stored.error == answer["error"] == message and stored.text == "" and answer["answer"] == ""
    assert not Verification.objects.filter(answer=stored).exists()  # nothing to check: no answer stands
    # The input as message_start gave it; no message_delta came, so the output at most a token a byte.
    [spend] = Spend.objects.all()
    received = len("The viaduct is 196 ")
    assert spend.settled and (spend.input_tokens, spend.output_tokens) == (2_000, received)
    assert spend.cost_usd == cost_usd(settings.CLAUDE_ANSWER_MODEL, 2_000, received, DEFAULT_PRICES)
    assert claude.request_count == 1  # a stream that began is never sent again: it would be billed twice


def test_a_reader_who_leaves_mid_answer_stops_claude_and_the_answer_says_so(
    client: Client, claude: FakeMessagesAPI
) -> None:
    claude.streamed(WRITTEN, input_tokens=2_000, word_seconds=0.05)
    login(client, "reader")
    response = stream_ask(client)
    chunks = response.streaming_content
    assert isinstance(chunks, Iterator)
    first = next(chunks)
    assert first.startswith(b"event: delta")
    leave(response)

    stored = Answer.objects.get()
    assert stored.error == READER_LEFT and stored.text == ""
    assert not Verification.objects.filter(answer=stored).exists()
    [spend] = Spend.objects.all()
    assert spend.settled and spend.input_tokens == 2_000 and 0 < spend.output_tokens < len(WRITTEN)
    # The Claude slot was given back: the next streamed question is answered.
    claude.streamed("It opened in 1874 [1].")
    _, answer = words_then_answer(events_of(stream_ask(client).streaming_content))
    assert answer["answer"] == "It opened in 1874 [1]."


def test_an_answer_cut_off_at_its_length_limit_keeps_its_whole_sentences(
    client: Client, claude: FakeMessagesAPI
) -> None:
    claude.streamed("The viaduct is 196 m long [1]. It has twenty", stop_reason="max_tokens")
    login(client, "reader")
    words, answer = words_then_answer(events_of(stream_ask(client).streaming_content))
    assert "".join(words).endswith("It has twenty")  # the reader saw the words as they came ...
    # ... and the answer that stands, which replaces them, is what it finished.
    assert answer["answer"] == Answer.objects.get().text == "The viaduct is 196 m long [1]."
    assert Verification.objects.filter(answer__public_id=answer["answer_id"]).exists()


def test_an_answer_cut_off_before_its_first_sentence_ends_says_so(
    client: Client, claude: FakeMessagesAPI
) -> None:
    claude.streamed("The viaduct, which was built between 1873 and", stop_reason="max_tokens")
    login(client, "reader")
    _, answer = words_then_answer(events_of(stream_ask(client).streaming_content))
    assert answer["error"] == CUT_OFF_REPLY and answer["answer"] == ""
    assert not Verification.objects.exists()


def test_with_every_claude_slot_taken_a_stream_is_refused_at_once(
    client: Client, claude: FakeMessagesAPI, settings
) -> None:
    settings.WEB_CLAUDE_SLOTS = 1
    claude.streamed(WRITTEN, word_seconds=0.05)
    login(client, "reader")
    holding = stream_ask(client)  # not read yet: it holds the one slot
    busy = client.post("/api/ask", {"question": QUESTION, "stream": True}, content_type="application/json")
    assert busy.status_code == 503 and busy.json() == {"error": CLAUDE_BUSY} and busy["Retry-After"]
    leave(holding)  # never read: Claude was never asked, and nothing is stored
    assert Answer.objects.count() == 0 and claude.request_count == 0
    claude.streamed(WRITTEN)
    _, answer = words_then_answer(events_of(stream_ask(client).streaming_content))
    assert answer["answer"] == WRITTEN  # the slot was given back


def test_without_stream_the_answer_comes_whole_as_before(client: Client, claude: FakeMessagesAPI) -> None:
    claude.reply_text(WRITTEN)
    login(client, "reader")
    response = client.post("/api/ask", {"question": QUESTION}, content_type="application/json")
    assert response["Content-Type"].startswith("application/json") and response.json()["answer"] == WRITTEN
    assert "stream" not in claude.last_request["body"]


def test_the_schema_documents_the_stream(client: Client) -> None:
    ask = client.get("/api/openapi.json").json()["paths"]["/api/ask"]["post"]
    assert "text/event-stream" in ask["responses"]["200"]["content"]
    schema = client.get("/api/openapi.json").json()["components"]["schemas"]["AskIn"]
    assert "delta" in schema["properties"]["stream"]["description"]


def page_events(client: Client, fragment: str) -> list[tuple[str, str]]:
    """The events of the stream the fragment a page swapped in connects to, their data as HTML."""
    [address] = re.findall(r'sse-connect="([^"]+)"', fragment)
    response = client.get(address)
    assert isinstance(response, StreamingHttpResponse) and response["Content-Type"] == "text/event-stream"
    events = []
    for block in b"".join(response.streaming_content).decode().split("\n\n"):
        if block.strip():
            name, *lines = block.split("\n")
            events.append((name.removeprefix("event: "), "\n".join(x.removeprefix("data: ") for x in lines)))
    return events


def test_the_page_streams_the_answer_then_swaps_in_the_stored_turn(
    client: Client, claude: FakeMessagesAPI
) -> None:
    claude.streamed(WRITTEN)
    login(client, "reader")
    posted = client.post("/", {"question": QUESTION, "stream": "1"}, headers={"HX-Request": "true"})
    fragment = posted.content.decode()
    assert posted.status_code == 200 and 'hx-ext="sse"' in fragment and html.escape(QUESTION) in fragment
    assert not Answer.objects.exists()  # nothing is asked until the page fetches the stream

    events = page_events(client, fragment)
    names = [name for name, _ in events]
    assert names[-2:] == ["answer", "done"] and set(names[:-2]) == {"delta"} and len(names) > 5
    words = "".join(data for name, data in events if name == "delta")
    # Each whole citation arrives linked to its source's passage.
    assert re.search(r'<a class="cite" href="/articles/[^"]+" title="Source 1: [^"]+">\[1\]</a>', words)
    stored = Answer.objects.get()
    turn = events[-2][1]
    assert f'id="answer-{stored.public_id}"' in turn and 'hx-trigger="every 2s"' in turn  # the verdict polls
    assert f'hx-get="{stored.get_absolute_url()}"' in turn and 'hx-push-url="true"' in turn
    assert Verification.objects.filter(answer=stored).exists()

    # Fetched again (a browser reconnects once a stream ends), it says the stream is over and asks nothing.
    again = page_events(client, fragment)
    assert [name for name, _ in again] == ["answer", "done"] and html.escape(STREAM_GONE) in again[0][1]
    assert Answer.objects.count() == 1 and claude.request_count == 1


def test_a_follow_up_box_streams_a_turn_into_the_conversation(
    client: Client, claude: FakeMessagesAPI
) -> None:
    claude.streamed(WRITTEN)
    login(client, "reader")
    first = client.post("/", {"question": QUESTION, "stream": "1"}, headers={"HX-Request": "true"})
    page_events(client, first.content.decode())
    conversation = Answer.objects.get().question.conversation
    assert conversation is not None
    claude.reply_text("When did the Harrowden Viaduct open?").streamed("It opened in 1874 [1].")
    posted = client.post(
        "/",
        {"question": "When did it open?", "conversation": str(conversation.public_id), "stream": "1"},
        headers={"HX-Request": "true"},
    )
    assert '<li class="turn streaming"' in posted.content.decode()
    events = page_events(client, posted.content.decode())
    assert (
        events[-2][0] == "answer" and 'id="turn-2"' in events[-2][1] and 'hx-swap-oob="true"' in events[-2][1]
    )


def test_a_visitor_without_javascript_still_gets_the_answer_page(
    client: Client, claude: FakeMessagesAPI
) -> None:
    claude.reply_text(WRITTEN)
    login(client, "reader")
    response = client.post("/", {"question": QUESTION}, follow=True)
    assert response.status_code == 200 and "196 m long" in response.content.decode()
    assert "stream" not in claude.last_request["body"]


def test_a_page_streams_a_broken_answer_as_its_stored_failure(
    client: Client, claude: FakeMessagesAPI
) -> None:
    claude.streamed(WRITTEN, break_after=3)
    login(client, "reader")
    posted = client.post("/", {"question": QUESTION, "stream": "1"}, headers={"HX-Request": "true"})
    events = page_events(client, posted.content.decode())
    assert events[-2][0] == "answer" and html.escape(STREAM_BROKEN) in events[-2][1]
    assert "No answer this time" in events[-2][1]


def test_without_claude_the_page_answers_at_once_as_before(client: Client) -> None:
    login(client, "reader")
    posted = client.post("/", {"question": QUESTION, "stream": "1"}, headers={"HX-Request": "true"})
    assert "sse-connect" not in posted.content.decode() and posted["HX-Push-Url"]
    assert Answer.objects.get().generator == "extractive"


def test_without_claude_a_stream_is_the_local_answer_whole_even_if_the_reader_leaves(client: Client) -> None:
    login(client, "reader")
    response = stream_ask(client)
    chunks = response.streaming_content
    assert isinstance(chunks, Iterator)
    first = next(chunks).decode()
    assert first.startswith("event: delta")
    leave(response)
    stored = Answer.objects.get()
    [(_, data)] = events_of([first.encode()])
    assert stored.generator == "extractive" and not stored.error and stored.text == data["text"]
    assert Verification.objects.filter(answer=stored).exists()


def test_words_of_a_note_no_longer_shared_with_the_reader_stop_at_once_and_the_stream_ends_as_withheld(
    client: Client, claude: FakeMessagesAPI
) -> None:
    claude.streamed(WRITTEN, word_seconds=0.02)
    login(client, "reader")
    response = stream_ask(client)
    chunks = response.streaming_content
    assert isinstance(chunks, Iterator)
    first = next(chunks)
    [(name, shown)] = events_of([first])
    assert name == "delta" and shown["text"]
    # While Claude writes, the notes it writes from are narrowed to the board, which this reader is not in.
    Article.objects.update(audiences=["board"])
    rest = events_of(chunks)
    assert rest == [
        ("error", {"error": ANSWER_NOT_SHARED})
    ]  # not one word more, and the stored answer's word
    stored = Answer.objects.get()
    assert stored.text == WRITTEN and not stored.error  # written whole, and withheld with its sources
    assert not Answer.objects.readable(reader_of(stored.question.asked_by)).exists()


def test_a_stream_whose_sources_are_withheld_before_its_first_word_shows_none(
    client: Client, claude: FakeMessagesAPI
) -> None:
    claude.streamed(WRITTEN)
    login(client, "reader")
    posted = client.post("/", {"question": QUESTION, "stream": "1"}, headers={"HX-Request": "true"})
    [address] = re.findall(r'sse-connect="([^"]+)"', posted.content.decode())
    response = client.get(address)  # retrieved now; the words are written as the stream is read
    assert isinstance(response, StreamingHttpResponse)
    Article.objects.update(withheld_at=timezone.now(), withheld_reason="made private")
    text = b"".join(response.streaming_content).decode()
    assert "event: delta" not in text and "196 m" not in text
    assert html.escape(ANSWER_NOT_SHARED) in text and text.endswith("event: done\ndata: \n\n")


def test_a_stream_that_runs_past_its_time_limit_is_stopped_and_stored_saying_so(
    client: Client, claude: FakeMessagesAPI, settings
) -> None:
    settings.STREAM_MAX_SECONDS = 0.3
    settings.WEB_CLAUDE_SLOTS = 1
    claude.streamed(WRITTEN, input_tokens=2_000, word_seconds=0.1)
    login(client, "reader")
    words, answer = words_then_answer(events_of(stream_ask(client).streaming_content))

    assert 0 < len("".join(words)) < len(WRITTEN)  # the words written in time, then no more
    stored = Answer.objects.get()
    assert stored.error == answer["error"] == STREAM_TOO_LONG and stored.text == "" and answer["answer"] == ""
    assert not Verification.objects.filter(answer=stored).exists()
    [spend] = Spend.objects.all()  # Claude was stopped, and settled at what it had written
    assert spend.settled and spend.input_tokens == 2_000 and 0 < spend.output_tokens < len(WRITTEN)
    # The one Claude slot was given back: the next streamed question is answered.
    settings.STREAM_MAX_SECONDS = 30
    claude.streamed("It opened in 1874 [1].")
    _, answer = words_then_answer(events_of(stream_ask(client).streaming_content))
    assert answer["answer"] == "It opened in 1874 [1]."


def _stream_request(live_server: Any, client: Client, settings: Any) -> bytes:
    """The raw GET of the stream of a question a page asked, signed in as `client` is (one request on its
    connection: a kept-alive one waits on a thread of the test's server for the next, as gunicorn's does not)."""
    posted = client.post("/", {"question": QUESTION, "stream": "1"}, headers={"HX-Request": "true"})
    [address] = re.findall(r'sse-connect="([^"]+)"', posted.content.decode())
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    host = urlsplit(live_server.url).netloc
    return (
        f"GET {html.unescape(address)} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
        f"Cookie: {settings.SESSION_COOKIE_NAME}={session}\r\nConnection: close\r\n\r\n"
    ).encode()


def _serving() -> list[int]:
    """The threads of the site's live server that are in a request now (not the fake Messages API's)."""
    serving = []
    for ident, frame in sys._current_frames().items():
        stack = traceback.extract_stack(frame)
        if any(f.filename.endswith(os.path.join("servers", "basehttp.py")) for f in stack):
            serving.append(ident)
    return serving


def _until(done: Any, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.django_db(transaction=True)
def test_a_client_that_reads_nothing_holds_no_web_thread_nor_claude_slot_once_claude_is_done(
    live_server: Any, sample_garden: None, client: Client, claude: FakeMessagesAPI, settings: Any
) -> None:
    settings.WEB_CLAUDE_SLOTS = 1
    claude.streamed(WRITTEN, word_seconds=0.05)
    login(client, "reader")
    request = _stream_request(live_server, client, settings)
    with socket.create_connection(_address(live_server)) as reader:
        reader.sendall(request)  # ... and reads nothing
        _until(lambda: Answer.objects.exists())
        _until(lambda: not _serving())  # the web thread is free, the reader's connection still open
        with claude_slot():  # and so is the one Claude slot
            pass
        stored = Answer.objects.get()
        assert stored.text == WRITTEN and not stored.error  # written whole into the reader's connection
        reader.settimeout(5)
        received = b""
        while not received.endswith(b"event: done\ndata: \n\n"):
            received += reader.recv(65536)
    assert b"event: answer" in received and f"answer-{stored.public_id}".encode() in received


@pytest.mark.django_db(transaction=True)
def test_a_client_that_leaves_without_reading_stops_claude_and_frees_its_thread_and_slot(
    live_server: Any, sample_garden: None, client: Client, claude: FakeMessagesAPI, settings: Any
) -> None:
    settings.WEB_CLAUDE_SLOTS = 1
    claude.streamed(WRITTEN, word_seconds=0.1)
    login(client, "reader")
    request = _stream_request(live_server, client, settings)
    reader = socket.create_connection(_address(live_server))
    reader.sendall(request)
    _until(lambda: claude.request_count == 1)  # Claude is writing
    # Gone without reading a byte: the connection is reset, as a closed browser tab's is.
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    reader.close()
    _until(lambda: Answer.objects.exists())
    _until(lambda: not _serving())
    with claude_slot():
        pass
    stored = Answer.objects.get()
    assert stored.error == READER_LEFT and stored.text == ""
    [spend] = Spend.objects.all()
    assert spend.settled and 0 < spend.output_tokens < len(WRITTEN)  # stopped before it was done


def _address(live_server: Any) -> tuple[str, int]:
    parts = urlsplit(live_server.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def test_the_claude_slot_is_given_back_once_claude_is_done_before_the_reader_has_read_the_end(
    client: Client, claude: FakeMessagesAPI, settings
) -> None:
    settings.WEB_CLAUDE_SLOTS = 1
    claude.streamed(WRITTEN)
    login(client, "reader")
    response = stream_ask(client)
    chunks = response.streaming_content
    assert isinstance(chunks, Iterator)
    # The server's thread writes each event as it comes; here it has the stored answer to write, and the
    # reader has read none of it (nor the events before it, held in its connection's buffers).
    while not next(chunks).startswith(b"event: answer"):
        pass
    with claude_slot():  # Claude is done, so another reader may have the one slot
        pass
    leave(response)
    assert not Answer.objects.get().error  # written whole before the reader went: kept whole


def _follow_up_streamed(client: Client, way: str, conversation: str) -> str:
    """Ask "When did it open?" in `conversation`, streamed by the API or by the page (`way`): the text of what
    came back (the events' data)."""
    if way == "api":
        response = client.post(
            "/api/ask",
            {"question": "When did it open?", "stream": True, "conversation": conversation},
            content_type="application/json",
        )
        if not isinstance(response, StreamingHttpResponse):
            return response.content.decode()
        return b"".join(response.streaming_content).decode()
    posted = client.post(
        "/",
        {"question": "When did it open?", "conversation": conversation, "stream": "1"},
        headers={"HX-Request": "true"},
    )
    return "".join(data for _, data in page_events(client, posted.content.decode()))


@pytest.mark.parametrize("way", ["api", "page"])
def test_a_streamed_follow_up_s_condensing_is_booked_to_its_asker(
    client: Client, claude: FakeMessagesAPI, way: str
) -> None:
    claude.streamed(WRITTEN)
    asker = login(client, "reader")
    _, first = words_then_answer(events_of(stream_ask(client).streaming_content))
    claude.reply_text("When did the Harrowden Viaduct open?").streamed("It opened in 1874 [1].")
    assert "It opened in 1874" in _follow_up_streamed(client, way, first["conversation"])
    condensing = Spend.objects.get(purpose=SpendPurpose.CONDENSE)
    # On the logs page the call counts as the reader's, not as spent for nobody.
    assert condensing.settled and condensing.user_id == asker.pk and not condensing.anonymous


@pytest.mark.parametrize("way", ["api", "page"])
def test_with_every_claude_slot_taken_a_streamed_follow_up_is_not_condensed(
    client: Client, claude: FakeMessagesAPI, settings, way: str
) -> None:
    settings.WEB_CLAUDE_SLOTS = 1
    claude.streamed(WRITTEN)
    login(client, "reader")
    _, first = words_then_answer(events_of(stream_ask(client).streaming_content))
    asked = claude.request_count
    with claude_slot():  # another reader's answer is being written
        said = _follow_up_streamed(client, way, first["conversation"])
    assert html.escape(CLAUDE_BUSY) in said or CLAUDE_BUSY in said
    assert claude.request_count == asked and Answer.objects.count() == 1  # Claude was not asked to condense
    assert not Spend.objects.filter(purpose=SpendPurpose.CONDENSE).exists()


def test_with_every_claude_slot_taken_a_follow_up_asked_whole_is_not_condensed(
    client: Client, claude: FakeMessagesAPI, settings
) -> None:
    settings.WEB_CLAUDE_SLOTS = 1
    claude.reply_text(WRITTEN)
    login(client, "reader")
    first = client.post("/api/ask", {"question": QUESTION}, content_type="application/json").json()
    asked = claude.request_count
    with claude_slot():
        busy = client.post(
            "/api/ask",
            {"question": "When did it open?", "conversation": first["conversation"]},
            content_type="application/json",
        )
    assert busy.status_code == 503 and busy.json() == {"error": CLAUDE_BUSY}
    assert claude.request_count == asked and Answer.objects.count() == 1
