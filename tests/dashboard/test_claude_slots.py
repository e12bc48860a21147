"""Claude calls from web requests are bounded: at most WEB_CLAUDE_SLOTS threads of a process wait on Claude,
and one more request is told at once that Claude is busy (503, Retry-After) instead of queueing for a thread."""

import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from dashboard.claude_slots import CLAUDE_BUSY, CLAUDE_BUSY_RETRY_AFTER, ClaudeBusy, claude_slot
from garden.models import Answer
from tests.factories import STATION_QUOTE, login, verified_by_claude

pytestmark = pytest.mark.django_db

IN_SCOPE = "How long is the Harrowden Viaduct and how many arches does it have?"
OUT_OF_SCOPE = "What is the boiling point of ethanol at sea level?"
# A refusal is a quick request: far below the seconds a request queued behind Claude would wait.
AT_ONCE_SECONDS = 1.0


@contextmanager
def _slots_taken(count: int) -> Iterator[None]:
    """Every slot held, as by `count` requests waiting on Claude."""
    with ExitStack() as stack:
        for _ in range(count):
            stack.enter_context(claude_slot())
        yield


def test_one_thread_more_than_the_slots_is_refused_at_once_and_a_freed_slot_is_taken_again(settings):
    settings.WEB_CLAUDE_SLOTS = 3
    waiting, release = threading.Barrier(4), threading.Event()

    def wait_on_claude() -> None:
        with claude_slot():
            waiting.wait()
            release.wait(10)

    threads = [threading.Thread(target=wait_on_claude) for _ in range(3)]
    for thread in threads:
        thread.start()
    waiting.wait(10)  # three threads hold the three slots
    began = time.perf_counter()
    with pytest.raises(ClaudeBusy), claude_slot():
        pass
    assert time.perf_counter() - began < 0.1  # refused, not queued
    release.set()
    for thread in threads:
        thread.join(10)
    with claude_slot():  # the slots are free again
        pass


def test_with_every_slot_taken_an_ask_by_claude_gets_503_at_once_and_nothing_is_asked(
    client, claude, settings
):
    settings.WEB_CLAUDE_SLOTS = 2
    login(client, "reader")
    claude.reply_text("The viaduct is long [1].")
    client.post("/api/ask", {"question": OUT_OF_SCOPE}, "application/json")  # the embedding model loaded
    asked = Answer.objects.count()
    with _slots_taken(2):
        began = time.perf_counter()
        busy = client.post("/api/ask", {"question": IN_SCOPE}, "application/json")
        assert time.perf_counter() - began < AT_ONCE_SECONDS
    assert busy.status_code == 503 and busy.json() == {"error": CLAUDE_BUSY}
    assert busy["Retry-After"] == str(CLAUDE_BUSY_RETRY_AFTER)
    assert claude.request_count == 0 and Answer.objects.count() == asked
    # A slot is free again: the same question is answered by Claude.
    answered = client.post("/api/ask", {"question": IN_SCOPE}, "application/json")
    assert answered.status_code == 200 and answered.json()["answer"] == "The viaduct is long [1]."
    assert claude.request_count == 1


def test_a_refusal_needs_no_slot_and_is_given_while_claude_is_busy(client, claude, settings):
    settings.WEB_CLAUDE_SLOTS = 1
    login(client, "reader")
    with _slots_taken(1):
        refused = client.post("/api/ask", {"question": OUT_OF_SCOPE}, "application/json")
    assert refused.status_code == 200 and refused.json()["refused"]
    assert claude.request_count == 0


def test_the_ask_page_says_claude_is_busy_and_keeps_the_question(client, claude, settings):
    settings.WEB_CLAUDE_SLOTS = 1
    login(client, "reader")
    with _slots_taken(1):
        page = client.post("/", {"question": IN_SCOPE})
        htmx = client.post("/", {"question": IN_SCOPE}, headers={"HX-Request": "true"})
    assert page.status_code == 503 and page["Retry-After"] == str(CLAUDE_BUSY_RETRY_AFTER)
    html = page.content.decode()
    assert CLAUDE_BUSY in html and IN_SCOPE in html  # the box still holds what was typed
    assert htmx.status_code == 503 and 'role="alert"' in htmx.content.decode()
    assert CLAUDE_BUSY in htmx.content.decode()
    assert claude.request_count == 0 and not Answer.objects.exists()


def test_a_readers_check_with_claude_gets_503_and_a_local_only_check_goes_through(client, claude, settings):
    settings.WEB_CLAUDE_SLOTS = 1
    settings.ANONYMOUS_CAN_CHECK = True
    claude.set_default(verified_by_claude(STATION_QUOTE))
    with _slots_taken(1):
        anonymous = client.post("/api/check", {"text": STATION_QUOTE}, "application/json")  # the local judge
        login(client, "reader")
        busy = client.post("/api/check", {"text": STATION_QUOTE}, "application/json")
    assert anonymous.status_code == 200 and anonymous.json()["claims"]
    assert busy.status_code == 503 and busy.json() == {"error": CLAUDE_BUSY}
    assert busy["Retry-After"] == str(CLAUDE_BUSY_RETRY_AFTER)
    assert claude.request_count == 0
    assert client.post("/api/check", {"text": STATION_QUOTE}, "application/json").status_code == 200
    assert claude.request_count >= 1
