"""The served model's client (`providers.openai`) against the fake chat completions API, through the real `openai`
SDK: a forced tool call sent as a strict JSON schema and read back, the key never in an error or a log, and a
stream's breaks as `ModelError`s carrying no less than was billed."""

import json
import logging
from decimal import Decimal

import pytest

from providers.chat import chat_call
from providers.errors import AUTH_MESSAGE, ModelError
from providers.openai import OpenAIConfig, OpenAIStream
from tests.fakes import chat_completions as chat

pytest_plugins = ["tests.fakes.chat_completions"]
KEY = "sk-proj-test-not-a-real-key-0123456789"
TOOL = {
    "name": "record",
    "description": "Record it.",
    "input_schema": {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    },
}


def config_of(api: chat.FakeChatAPI, **prices: tuple[Decimal, Decimal]) -> OpenAIConfig:
    return OpenAIConfig(
        api_key=KEY, base_url=api.base_url, max_retries=0, prices={"": (Decimal(0), Decimal(0)), **prices}
    )


def test_a_forced_tool_call_is_a_strict_json_schema_read_back_as_the_tool_s_input(
    fake_chat_api: chat.FakeChatAPI,
) -> None:
    fake_chat_api.enqueue(chat.completion('{"n": 3}', prompt_tokens=1000, completion_tokens=10))

    reply = chat_call(
        config_of(fake_chat_api, m=(Decimal(1), Decimal(2))),
        model="m-judge",
        system="Judge.",
        messages=[{"role": "user", "content": [{"type": "text", "text": "data"}]}],
        max_tokens=50,
        tools=[TOOL],
        tool_choice={"type": "tool", "name": "record"},
    )

    assert reply.tool_input == {"n": 3} and reply.cost_usd == Decimal("0.001020")
    sent = fake_chat_api.last_request
    assert sent["headers"]["authorization"] == f"Bearer {KEY}"
    assert sent["body"]["response_format"]["json_schema"] == {
        "name": "record",
        "description": "Record it.",
        "schema": TOOL["input_schema"],
        "strict": True,
    }


def test_the_key_is_never_in_an_error_or_the_log(
    fake_chat_api: chat.FakeChatAPI, caplog: pytest.LogCaptureFixture
) -> None:
    fake_chat_api.enqueue(chat.status(401, f"Incorrect API key provided: {KEY}. Bearer {KEY}"))
    caplog.set_level(logging.DEBUG, logger="providers")

    with pytest.raises(ModelError) as failed:
        chat_call(config_of(fake_chat_api), model="m", system="", messages=[], max_tokens=5)

    assert failed.value.kind == "auth" and failed.value.message == AUTH_MESSAGE
    assert KEY not in failed.value.detail and failed.value.__context__ is None
    assert KEY not in caplog.text and "[redacted]" in caplog.text


@pytest.mark.parametrize("break_with", ["error", "drop"])
def test_a_stream_that_breaks_is_an_error_billed_no_less_than_what_came(
    fake_chat_api: chat.FakeChatAPI, break_with: str
) -> None:
    fake_chat_api.enqueue(chat.streamed("one two three four five", break_after=2, break_with=break_with))
    stream = OpenAIStream(
        config_of(fake_chat_api),
        model="m",
        system="s",
        messages=[{"role": "user", "content": "q"}],
        max_tokens=300,
    )
    pieces: list[str] = []

    with pytest.raises(ModelError) as broke:
        for piece in stream.text():
            pieces.append(piece)

    assert pieces == ["one ", "two "]
    usage = broke.value.usage
    assert usage.output_tokens >= 2 and usage.input_tokens >= len(
        json.dumps("q")
    )  # no usage came: bounded above
    assert broke.value.kind == ("connection" if break_with == "drop" else "server_error")
