"""providers.claude against the real anthropic SDK, talking to the local fake Messages API."""

from __future__ import annotations

import logging
import pickle
import socket
import time
from decimal import Decimal
from typing import Any

import anthropic
import anthropic._base_client
import pytest

from modelcalls import ModelReply, Usage
from providers.claude import FALLBACK_PRICE, ClaudeConfig, call_claude, cost_usd, price_for
from providers.errors import (
    AUTH_MESSAGE,
    BAD_REQUEST_MESSAGE,
    MALFORMED_MESSAGE,
    RATE_LIMITED_MESSAGE,
    REFUSED_MESSAGE,
    SERVER_ERROR_MESSAGE,
    TIMEOUT_MESSAGE,
    ModelError,
)
from tests.fakes import messages_api
from tests.fakes.messages_api import FakeMessagesAPI, delay, malformed, reply_text, status

# The shared fixture, bound here so this file does not depend on a conftest loading the plugin.
fake_messages_api = messages_api.fake_messages_api

API_KEY = "sk-ant-api03-TESTKEY-do-not-leak-0123456789abcdef"
MODEL = "claude-sonnet-4-6"
QUESTION = [{"role": "user", "content": "What is a knowledge garden?"}]
VERDICT_TOOL: dict[str, Any] = {
    "name": "record_verdict",
    "description": "Record whether the claim is supported.",
    "input_schema": {
        "type": "object",
        "properties": {"verdict": {"type": "string"}, "confidence": {"type": "number"}},
        "required": ["verdict"],
    },
}
FORCE_VERDICT = {"type": "tool", "name": "record_verdict"}


def make_config(api: FakeMessagesAPI, **overrides: Any) -> ClaudeConfig:
    settings: dict[str, Any] = {"api_key": API_KEY, "base_url": api.base_url, "timeout_seconds": 5.0}
    settings.update(overrides)
    return ClaudeConfig(**settings)


def ask(config: ClaudeConfig, **overrides: Any) -> ModelReply:
    arguments: dict[str, Any] = {
        "model": MODEL,
        "system": "Answer only from the garden's articles.",
        "messages": QUESTION,
        "max_tokens": 256,
    }
    arguments.update(overrides)
    return call_claude(config, **arguments)


class RetrySleeps(list[float]):
    """Stands in for the SDK's `time` module: records the waits between attempts instead of sleeping them,
    so the tests read how long the client chose to wait, whatever the machine's speed."""

    def sleep(self, seconds: float) -> None:
        self.append(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@pytest.fixture
def retry_sleeps(monkeypatch: pytest.MonkeyPatch) -> RetrySleeps:
    sleeps = RetrySleeps()
    monkeypatch.setattr(anthropic._base_client, "time", sleeps)
    return sleeps


def unused_local_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def fail(config: ClaudeConfig, **overrides: Any) -> ModelError:
    with pytest.raises(ModelError) as caught:
        ask(config, **overrides)
    return caught.value


def test_text_reply_reports_usage_and_cost(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.reply_text("A garden of linked notes.", input_tokens=1000, output_tokens=500)

    reply = ask(make_config(fake_messages_api))

    assert reply.text == "A garden of linked notes."
    assert reply.tool_input is None
    assert reply.model == MODEL
    assert (reply.input_tokens, reply.output_tokens) == (1000, 500)
    # Sonnet: $3 per million input tokens, $15 per million output tokens.
    assert reply.cost_usd == Decimal("0.010500")
    assert reply.stop_reason == "end_turn"
    assert 0 <= reply.latency_ms < 5000

    sent = fake_messages_api.last_request
    assert sent["path"] == "/v1/messages"
    assert sent["body"]["model"] == MODEL
    assert sent["body"]["max_tokens"] == 256
    assert sent["body"]["system"] == "Answer only from the garden's articles."
    assert sent["body"]["messages"] == QUESTION
    assert "tools" not in sent["body"]
    assert sent["headers"]["authorization"] == f"Bearer {API_KEY}"


def test_tool_reply_returns_tool_input(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.reply_tool(
        "record_verdict", {"verdict": "supported", "confidence": 0.9}, text="Checked the article."
    )

    reply = ask(make_config(fake_messages_api), tools=[VERDICT_TOOL], tool_choice=FORCE_VERDICT)

    assert reply.tool_input == {"verdict": "supported", "confidence": 0.9}
    assert reply.text == "Checked the article."
    assert reply.stop_reason == "tool_use"
    body = fake_messages_api.last_request["body"]
    assert body["tools"] == [VERDICT_TOOL]
    assert body["tool_choice"] == FORCE_VERDICT


def test_fake_rejects_sampling_parameters_like_the_real_api(fake_messages_api: FakeMessagesAPI) -> None:
    client = anthropic.Anthropic(api_key=API_KEY, base_url=fake_messages_api.base_url, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="temperature"):
        client.messages.create(
            model=MODEL,
            max_tokens=5,
            messages=[{"role": "user", "content": "Hi"}],
            extra_body={"temperature": 0},
        )


def test_rate_limit_twice_then_success_honours_retry_after(
    fake_messages_api: FakeMessagesAPI, retry_sleeps: RetrySleeps
) -> None:
    fake_messages_api.status(429, headers={"retry-after-ms": "20"})
    fake_messages_api.status(429, headers={"retry-after-ms": "20"})
    fake_messages_api.reply_text("Third time lucky.")

    reply = ask(make_config(fake_messages_api, max_retries=2))

    assert reply.text == "Third time lucky."
    assert fake_messages_api.request_count == 3
    # The 20 ms the server asked for, where exponential backoff would have waited 0.375-0.5 s, then 0.75-1 s.
    assert list(retry_sleeps) == [pytest.approx(0.02), pytest.approx(0.02)]
    retry_counts = [request["headers"]["x-stainless-retry-count"] for request in fake_messages_api.requests]
    assert retry_counts == ["0", "1", "2"]


def test_rate_limit_every_time_gives_rate_limited_after_all_attempts(
    fake_messages_api: FakeMessagesAPI, retry_sleeps: RetrySleeps
) -> None:
    # retry-after: 0 is not a usable wait, so the SDK falls back to exponential backoff.
    fake_messages_api.set_default(status(429, headers={"retry-after": "0"}))

    error = fail(make_config(fake_messages_api, max_retries=2))

    assert error.kind == "rate_limited"
    assert fake_messages_api.request_count == 3
    # Backoff of 0.5 s, then 1 s, each less up to 25 % jitter.
    assert len(retry_sleeps) == 2
    assert 0.375 <= retry_sleeps[0] <= 0.5 and 0.75 <= retry_sleeps[1] <= 1.0
    assert error.message == RATE_LIMITED_MESSAGE
    assert str(error) == RATE_LIMITED_MESSAGE
    assert error.retryable
    assert error.status_code == 429
    assert error.request_id is not None and error.request_id.startswith("req_fake_")
    assert "rate_limit_error" in error.detail
    assert "3 attempt(s)" in error.detail


def test_retry_after_beyond_the_limit_fails_at_once(
    fake_messages_api: FakeMessagesAPI, retry_sleeps: RetrySleeps
) -> None:
    fake_messages_api.set_default(status(429, headers={"retry-after": "3600"}))

    error = fail(make_config(fake_messages_api, max_retries=2, max_retry_wait_seconds=60))

    assert retry_sleeps == []  # no wait at all, let alone the hour asked for
    assert error.kind == "rate_limited"
    assert fake_messages_api.request_count == 1
    assert "3600" in error.detail


@pytest.mark.parametrize("code", [500, 503, 529])
def test_server_errors(fake_messages_api: FakeMessagesAPI, code: int) -> None:
    fake_messages_api.set_default(status(code))

    error = fail(make_config(fake_messages_api, max_retries=0))

    assert error.kind == "server_error"
    assert error.message == SERVER_ERROR_MESSAGE
    assert error.status_code == code
    assert fake_messages_api.request_count == 1


def test_overloaded_is_retried(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.status(529, headers={"retry-after-ms": "10"})
    fake_messages_api.reply_text("Back again.")

    assert ask(make_config(fake_messages_api, max_retries=1)).text == "Back again."
    assert fake_messages_api.request_count == 2


@pytest.mark.parametrize(
    ("code", "kind", "message"),
    [
        (401, "auth", AUTH_MESSAGE),
        (403, "auth", AUTH_MESSAGE),
        (400, "bad_request", BAD_REQUEST_MESSAGE),
        (404, "bad_request", BAD_REQUEST_MESSAGE),
        (413, "bad_request", BAD_REQUEST_MESSAGE),
    ],
)
def test_client_errors_are_not_retried(
    fake_messages_api: FakeMessagesAPI, code: int, kind: str, message: str
) -> None:
    fake_messages_api.set_default(status(code))

    error = fail(make_config(fake_messages_api, max_retries=2))

    assert (error.kind, error.message, error.status_code) == (kind, message, code)
    assert not error.retryable
    assert fake_messages_api.request_count == 1


def test_slow_reply_times_out_and_is_retried(
    fake_messages_api: FakeMessagesAPI, retry_sleeps: RetrySleeps
) -> None:
    fake_messages_api.set_default(delay(60))

    started = time.monotonic()
    error = fail(make_config(fake_messages_api, timeout_seconds=0.5, max_retries=1))

    assert error.kind == "timeout"
    assert error.message == TIMEOUT_MESSAGE
    assert fake_messages_api.request_count == 2
    assert len(retry_sleeps) == 1
    # Both attempts were cut off at the timeout: waiting for the reply would have taken a minute each.
    assert time.monotonic() - started < 60


def test_unreachable_server_is_a_connection_error() -> None:
    config = ClaudeConfig(api_key=API_KEY, base_url=unused_local_url(), max_retries=0)

    error = fail(config)

    assert error.kind == "connection"
    assert error.retryable


@pytest.mark.parametrize(
    "behaviour",
    [
        malformed(b'{"type": "message", "content": [{"type": "te'),
        malformed(b""),
        malformed(b"\xff\xfe not utf-8"),
        malformed(b"null"),
        malformed(b"[1, 2]"),
        malformed(b"{}"),
        malformed(b"<html>502 Bad Gateway</html>", content_type="text/html"),
        malformed(b'{"content": "not a list", "usage": {"input_tokens": 1, "output_tokens": 1}}'),
        malformed(b'{"content": [], "usage": {"input_tokens": "many"}}'),
        malformed(b'{"content": [{"type": "text"}], "usage": {"input_tokens": 1, "output_tokens": 1}}'),
        malformed(b'{"content": [{"type": "tool_use", "name": "x", "input": "oops"}], "usage": {}}'),
    ],
    ids=[
        "truncated-json",
        "empty-body",
        "not-utf8",
        "null",
        "list",
        "empty-object",
        "html",
        "content-not-list",
        "usage-not-int",
        "text-block-without-text",
        "tool-input-not-object",
    ],
)
def test_unreadable_replies_are_malformed(fake_messages_api: FakeMessagesAPI, behaviour: Any) -> None:
    fake_messages_api.enqueue(behaviour)

    error = fail(make_config(fake_messages_api, max_retries=2))

    assert error.kind == "malformed"
    assert error.message == MALFORMED_MESSAGE
    assert fake_messages_api.request_count == 1


def test_unknown_content_blocks_are_skipped(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.malformed(
        b'{"type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "stop_reason": "end_turn",'
        b' "content": [{"type": "brand_new_block", "data": 1}, {"type": "text", "text": "Still here."}],'
        b' "usage": {"input_tokens": 3, "output_tokens": 2}}'
    )

    assert ask(make_config(fake_messages_api)).text == "Still here."


def test_refusal_is_refused(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.refusal(category="cyber", explanation="Declined.")

    error = fail(make_config(fake_messages_api))

    assert error.kind == "refused"
    assert error.message == REFUSED_MESSAGE
    assert "cyber" in error.detail
    assert not error.retryable
    # A refusal is billed: what it cost travels with the error, for the judge's budget.
    assert (error.usage.input_tokens, error.usage.output_tokens) == (12, 1) and error.usage.cost_usd > 0


@pytest.mark.parametrize("tool_choice", [FORCE_VERDICT, {"type": "any"}])
def test_forced_tool_without_tool_use_is_malformed(
    fake_messages_api: FakeMessagesAPI, tool_choice: dict[str, Any]
) -> None:
    fake_messages_api.reply_text("I'd rather just talk.")

    error = fail(make_config(fake_messages_api), tools=[VERDICT_TOOL], tool_choice=tool_choice)

    assert error.kind == "malformed"
    assert "no tool_use block" in error.detail
    assert error.usage.input_tokens > 0 and error.usage.cost_usd > 0  # billed, though unusable


def test_forced_tool_with_another_tool_is_malformed(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.reply_tool("something_else", {"x": 1})

    error = fail(make_config(fake_messages_api), tools=[VERDICT_TOOL], tool_choice=FORCE_VERDICT)

    assert error.kind == "malformed"


def test_forced_tool_cut_off_at_max_tokens_is_malformed(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.reply_tool("record_verdict", {}, stop_reason="max_tokens")

    error = fail(make_config(fake_messages_api), tools=[VERDICT_TOOL], tool_choice=FORCE_VERDICT)

    assert error.kind == "malformed"
    assert "max_tokens" in error.detail


def test_unforced_tools_may_answer_in_text(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.reply_text("No tool needed.")

    reply = ask(make_config(fake_messages_api), tools=[VERDICT_TOOL], tool_choice={"type": "auto"})

    assert (reply.text, reply.tool_input) == ("No tool needed.", None)


def test_respond_builds_the_reply_from_the_request(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.respond(lambda body: reply_text(body["messages"][0]["content"].upper()))

    assert ask(make_config(fake_messages_api)).text == "WHAT IS A KNOWLEDGE GARDEN?"


def test_a_broken_responder_shows_up_as_a_server_error(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.respond(lambda body: body["no such field"])

    error = fail(make_config(fake_messages_api, max_retries=2))

    assert error.kind == "server_error"
    assert "KeyError" in error.detail
    assert fake_messages_api.request_count == 1


def test_api_key_never_leaks(fake_messages_api: FakeMessagesAPI, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    echoing = {"type": "error", "error": {"type": "authentication_error", "message": f"bad key {API_KEY}"}}
    fake_messages_api.enqueue(
        status(401, echoing),
        status(429, headers={"retry-after": "0"}),
        malformed(b"{oops"),
        malformed(API_KEY.encode(), content_type="text/plain"),
        delay(3),
    )
    config = make_config(fake_messages_api, max_retries=0, timeout_seconds=0.5)

    errors = [fail(config) for _ in range(5)]
    errors.append(fail(ClaudeConfig(api_key=API_KEY, base_url=unused_local_url(), max_retries=0)))

    assert [error.kind for error in errors] == [
        "auth",
        "rate_limited",
        "malformed",
        "malformed",
        "timeout",
        "connection",
    ]
    assert "[redacted]" in errors[0].detail
    for error in errors:
        for text in (str(error), repr(error), error.message, error.detail):
            assert API_KEY not in text
        # The SDK's exception holds the request and its Authorization header: it must not ride along.
        assert error.__cause__ is None
        assert error.__context__ is None
    assert caplog.records
    assert API_KEY not in caplog.text
    for record in caplog.records:
        assert API_KEY not in record.getMessage()
    assert API_KEY not in repr(config)


def test_prices_use_the_longest_prefix_and_a_high_fallback() -> None:
    prices = ClaudeConfig(api_key="k").prices
    assert price_for("claude-haiku-4-5", prices) == (Decimal("1"), Decimal("5"))
    assert price_for("claude-opus-4-7", prices) == (Decimal("5"), Decimal("25"))
    assert price_for("claude-opus-4-1-20250805", prices) == (Decimal("15"), Decimal("75"))
    assert price_for("claude-brand-new-9", prices) == FALLBACK_PRICE
    assert cost_usd("claude-haiku-4-5", 1, 1, prices) == Decimal("0.000006")
    assert cost_usd("claude-haiku-4-5", 1000, 0, prices, cache_read_tokens=1000) == Decimal("0.001100")
    half_a_millionth = {"cheap": (Decimal("0.5"), Decimal("0"))}
    assert cost_usd("cheap-1", 1, 0, half_a_millionth) == Decimal("0.000001")


def test_custom_prices_are_used_for_the_reply_cost(fake_messages_api: FakeMessagesAPI) -> None:
    fake_messages_api.reply_text("ok", input_tokens=2_000_000, output_tokens=1_000_000)
    config = make_config(fake_messages_api, prices={"claude-": (Decimal("2"), Decimal("10"))})

    assert ask(config).cost_usd == Decimal("14.000000")


def test_claude_error_survives_pickling() -> None:
    error = ModelError("refused", "declined", 200, "req_1", usage=Usage(12, 1, Decimal("0.000017")))

    copy = pickle.loads(pickle.dumps(error))

    assert (copy.kind, copy.detail, copy.status_code, copy.request_id, copy.usage) == (
        "refused",
        "declined",
        200,
        "req_1",
        Usage(12, 1, Decimal("0.000017")),
    )
    assert copy.message == REFUSED_MESSAGE
