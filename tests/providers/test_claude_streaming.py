"""`ClaudeStream` against the fake Messages API speaking Claude's streaming events: the text as written, the
usage as billed, and each way a stream breaks as a `ModelError` carrying what was billed so far."""

import time

import pytest

from providers.claude import ClaudeConfig, ClaudeStream
from providers.errors import ModelError
from tests.fakes.messages_api import FakeMessagesAPI, streamed

pytest_plugins = ["tests.fakes.messages_api"]
TEXT = "The viaduct is 196 m long [1]."


def stream_of(api: FakeMessagesAPI) -> ClaudeStream:
    config = ClaudeConfig(api_key="sk-ant-test-not-a-real-key-0000", base_url=api.base_url, max_retries=0)
    return ClaudeStream(
        config,
        model="claude-sonnet-5",
        system="s",
        messages=[{"role": "user", "content": "q"}],
        max_tokens=300,
    )


def test_the_text_comes_a_piece_at_a_time_with_the_usage_billed(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.enqueue(streamed(TEXT, input_tokens=900, output_tokens=11))
    stream = stream_of(fake_messages_api)
    pieces = list(stream.text())
    reply = stream.reply()
    assert len(pieces) == 7 and "".join(pieces) == TEXT
    assert (reply.input_tokens, reply.output_tokens, reply.stop_reason) == (900, 11, "end_turn")
    assert reply.cost_usd > 0 and fake_messages_api.last_request["body"]["stream"] is True


def test_the_first_piece_comes_before_the_last_is_written(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.enqueue(streamed(TEXT, word_seconds=0.1))
    began = time.monotonic()
    pieces = stream_of(fake_messages_api).text()
    next(pieces)
    first = time.monotonic() - began
    list(pieces)
    assert first < 0.3 < time.monotonic() - began


@pytest.mark.parametrize(
    ("break_with", "kind"),
    [("error", "server_error"), ("drop", "connection")],
    ids=["error-event", "dropped"],
)
def test_a_broken_stream_raises_with_what_was_billed_so_far(
    fake_messages_api: FakeMessagesAPI, break_with: str, kind: str
) -> None:
    fake_messages_api.enqueue(streamed(TEXT, input_tokens=900, break_after=3, break_with=break_with))
    received = []
    with pytest.raises(ModelError) as raised:
        for piece in stream_of(fake_messages_api).text():
            received.append(piece)
    assert "".join(received) == "The viaduct is "
    assert raised.value.kind == kind and raised.value.status_code == 200
    # No message_delta came: the output is booked at a token a byte of what arrived, never less than billed.
    assert (raised.value.usage.input_tokens, raised.value.usage.output_tokens) == (
        900,
        len("The viaduct is "),
    )
    assert "sk-ant" not in raised.value.detail


def test_a_request_refused_before_the_stream_raises_as_a_call_does(
    fake_messages_api: FakeMessagesAPI,
) -> None:
    fake_messages_api.status(400)
    with pytest.raises(ModelError) as raised:
        list(stream_of(fake_messages_api).text())
    assert raised.value.kind == "bad_request" and raised.value.usage.input_tokens == 0
