"""A reader watches Claude's answer arrive word by word (the fake Messages API streaming it), asks a follow-up
that streams into the conversation, and sees each verdict fill in; and a stream that breaks mid-answer ends in
the stored answer saying what happened."""

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command

from garden.answering.synthesis.claude import STREAM_BROKEN
from tests.conftest import SAMPLE_IMPORT
from tests.e2e.conftest import Site, screenshot
from tests.e2e.test_browser import csp_violations, log_in
from tests.fakes.messages_api import FakeMessagesAPI, streamed

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ANSWER = (
    "Harrowden Viaduct carries the railway across the valley of the River Harrow [1]. "
    "It was built of brick and has many arches [1]."
)
FOLLOW_UP = "It was completed in the 1870s [1]."


@pytest.fixture
def claude() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI() as api:
        yield api


@pytest.fixture
def claude_site(claude: FakeMessagesAPI) -> Iterator[str]:
    """The site with Claude configured: the fake Messages API writes its answers (the worker judges locally)."""
    site = Site({"GROUNDWORK_TEST_FAKE_CLAUDE_URL": claude.base_url}, name="stream").start()
    yield site.url
    site.stop()


# The answer's text without the labels of its verdict: one that comes quickly is already in the text when it is read.
WORDS = """answer => {
    const words = answer.cloneNode(true);
    words.querySelectorAll("a.label").forEach(label => label.remove());
    return words.textContent.split(/\\s+/).filter(Boolean).join(" ");
}"""


def answer_words(page: Any, turn: str) -> str:
    return str(page.eval_on_selector(f"{turn} .answer-text", WORDS))


def test_a_reader_watches_an_answer_and_a_follow_up_stream_in_then_their_verdicts(
    claude, claude_site, browser, celery_worker
):
    call_command("import_garden", *SAMPLE_IMPORT, "--no-progress")
    claude.enqueue(streamed(ANSWER, first_word_seconds=0.3, word_seconds=0.15))
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    violations = csp_violations(page)
    log_in(page, claude_site, "reader")  # visitors' answers are local unless they are given an allowance
    page.goto(f"{claude_site}/")
    page.fill("#id_question", "Where does Harrowden Viaduct carry the railway?")
    page.click("form.ask button")

    # Words are on the page, a citation among them linked, while Claude is still writing.
    page.wait_for_selector(".streaming-text a.cite", timeout=30_000)
    partial = page.inner_text(".streaming-text")
    assert partial.startswith("Harrowden Viaduct carries") and len(partial) < len(ANSWER)
    screenshot(page, "stream-arriving")
    # Whole, the stored turn replaces the words: the same text, at the answer's own address.
    page.wait_for_selector("#turn-1 .answer-text a.cite", timeout=30_000)
    assert answer_words(page, "#turn-1") == ANSWER
    page.wait_for_url("**/answers/**", timeout=10_000)

    claude.enqueue(
        streamed("When was Harrowden Viaduct built?"),  # the follow-up condensed (a plain call)
        streamed(FOLLOW_UP, first_word_seconds=0.3, word_seconds=0.15),
    )
    page.fill("#next_question", "When was it built?")
    page.click("form.follow-up button")
    page.wait_for_selector("li.turn.streaming .streaming-text", timeout=30_000)
    page.wait_for_selector("#turn-2 .answer-text", timeout=30_000)
    assert answer_words(page, "#turn-2") == FOLLOW_UP
    page.wait_for_selector("#turn-1 .verdict-line", timeout=90_000)
    page.wait_for_selector("#turn-2 .verdict-line", timeout=90_000)
    assert page.locator("ol.turns > li").count() == 2
    screenshot(page, "stream-follow-up-verdicts")
    assert violations == []
    page.close()


def test_a_stream_that_breaks_mid_answer_ends_in_the_answer_saying_so(
    claude, claude_site, browser, celery_worker
):
    call_command("import_garden", *SAMPLE_IMPORT, "--no-progress")
    claude.enqueue(streamed(ANSWER, word_seconds=0.1, break_after=6))
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    log_in(page, claude_site, "reader")
    page.goto(f"{claude_site}/")
    page.fill("#id_question", "Where does Harrowden Viaduct carry the railway?")
    page.click("form.ask button")
    banner = page.wait_for_selector("#turn-1 .banner.error", timeout=30_000)
    assert STREAM_BROKEN in banner.inner_text()
    assert page.locator(".streaming-text").count() == 0  # the half answer is gone
    page.close()
