"""The MCP server over HTTP under load: concurrent agents, each with a token of its own, check a 2,000-character
text at once.

`manage.py mcp --http` is served in a process of its own on a free port, on the bench's scratch database; each
agent connects with the SDK's own client and calls `check` once, all together. The figure is each call's
latency (p50, p95) and the wall time of the burst, after one call has warmed the server (its embedding model).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx2
from django.conf import settings
from django.contrib.auth.models import Group, User
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bench.timing import percentiles
from config.database import current_database_url
from config.services import free_port, wait_for_port
from dashboard.mcp_http import PATH
from garden.models import Passage
from verifier.roles import READER
from verifier.scopes import TokenScope
from verifier.tokens import token_create

MCP_CALLS = 20
TEXT_CHARS = 2_000
# The sample garden's tunnel is 402 m long: the text says 502 m, so one of its claims is contradicted.
TRUE_FIGURE, WRONG_FIGURE = "402 m", "502 m"
CALL_TIMEOUT_SECONDS = 600.0


def checked_text(chars: int = TEXT_CHARS) -> str:
    """At least `chars` characters of the garden's own passages, to the end of a sentence, one figure wrong."""
    passages = list(Passage.objects.order_by("article__title", "pk").values_list("text", flat=True))
    passages.sort(key=lambda passage: TRUE_FIGURE not in passage)  # the tunnel's figure first, so it is in
    text = ""
    for passage in passages:
        text = f"{text} {passage}".strip()
        if len(text) >= chars:
            break
    end = text.find(". ", chars - 1)  # the end of the sentence the `chars`-th character is in
    return (text[: end + 1] if end > 0 else text).replace(TRUE_FIGURE, WRONG_FIGURE, 1)


@contextmanager
def mcp_served() -> Iterator[str]:
    """`manage.py mcp --http` on the current (scratch) database; its address."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": current_database_url()}
    server = subprocess.Popen(
        [sys.executable, "manage.py", "mcp", "--http", "--port", str(port)],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port("127.0.0.1", port, 120)
        yield f"http://127.0.0.1:{port}{PATH}"
    finally:
        server.terminate()
        server.wait(30)


def agent_tokens(count: int) -> list[str]:
    """A reader and a personal token for each agent: each counts against its own rate limit."""
    group = Group.objects.get(name=READER)
    tokens = []
    for number in range(count):
        user, _ = User.objects.get_or_create(username=f"bench-agent-{number}")
        user.groups.add(group)
        tokens.append(token_create(user_id=user.pk, name="bench", scopes=[TokenScope.CHECK])[1])
    return tokens


async def _check_ms(url: str, token: str, text: str) -> float:
    """One agent's `check` of `text`, its latency in ms (the handshake before it not counted)."""
    http = create_mcp_http_client(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(CALL_TIMEOUT_SECONDS)
    )
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        began = time.perf_counter()
        result = await client.call_tool("check", {"text": text}, read_timeout_seconds=CALL_TIMEOUT_SECONDS)
        elapsed = (time.perf_counter() - began) * 1000
    if result.is_error:
        raise RuntimeError(f"a check over MCP failed: {result.content[0]}")
    return elapsed


def bench_mcp(calls: int = MCP_CALLS, chars: int = TEXT_CHARS) -> dict[str, Any]:
    """`calls` concurrent `check` calls of a `chars`-character text over HTTP, one agent (token) each."""
    text = checked_text(chars)
    tokens = agent_tokens(calls + 1)
    latencies: list[float] = []

    async def burst(url: str) -> tuple[float, float]:
        warm = await _check_ms(url, tokens[-1], text)
        began = time.perf_counter()

        async def one(token: str) -> None:
            latencies.append(await _check_ms(url, token, text))

        async with anyio.create_task_group() as group:
            for token in tokens[:calls]:
                group.start_soon(one, token)
        return warm, time.perf_counter() - began

    with mcp_served() as url:
        warm_ms, wall = anyio.run(burst, url)
    return {
        "calls": calls,
        "text_chars": len(text),
        "warm_up_ms": round(warm_ms, 1),
        "check": percentiles(latencies, digits=1),
        "wall_seconds": round(wall, 2),
        "calls_per_second": round(calls / wall, 2) if wall else None,
    }
