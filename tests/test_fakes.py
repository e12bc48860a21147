"""The fake HTTP APIs keep the suite's output readable: a client that leaves mid-reply, as clients do, is not
reported as the fake's fault."""

import json
import socket
import time
from urllib.parse import urlsplit

import pytest

from tests.fakes.messages_api import MESSAGES_PATH, FakeMessagesAPI, streamed

pytest_plugins = ["tests.fakes.messages_api"]


def test_a_client_that_leaves_mid_stream_leaves_no_traceback(
    fake_messages_api: FakeMessagesAPI, capfd: pytest.CaptureFixture[str]
) -> None:
    fake_messages_api.enqueue(streamed("one two three four five six seven eight", word_seconds=0.05))
    body = json.dumps(
        {
            "model": "claude-fake",
            "max_tokens": 50,
            "stream": True,
            "messages": [{"role": "user", "content": "q"}],
        }
    ).encode()
    address = urlsplit(fake_messages_api.base_url)
    with socket.create_connection((address.hostname, address.port)) as client:
        client.sendall(
            f"POST {MESSAGES_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: k\r\n"
            f"anthropic-version: 2023-06-01\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert client.recv(4096).startswith(b"HTTP/1.1 200")
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # reset
    time.sleep(0.6)  # the fake writes its next words into the closed connection
    assert fake_messages_api.request_count == 1
    assert "Traceback" not in capfd.readouterr().err
