"""The MCP server over streamable HTTP as an agent meets it: `manage.py mcp --http` in a process of its own on a
free port, driven by the SDK's own client with a personal token.

As for stdio, the server sees only committed rows: the tests commit theirs (`transaction=True`) and import the
sample garden again when an earlier such test emptied the database.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.utils import timezone
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from claimcheck.critics.citation_gate.items import DROPPED, LINE_MATCHES, LINE_MISSING, VERIFIED
from config.database import current_database_url
from config.services import free_port, wait_for_port
from dashboard.mcp_http import PATH, TOKEN_MISSING
from garden.answering.asking import REFUSAL_REASON
from garden.models import Article
from tests.dashboard.test_mcp import TOOLS, TUNNEL, WRONG_LENGTH
from tests.fakes.messages_api import FakeMessagesAPI
from verifier.models import ApiToken, Spend, SpendPurpose
from verifier.roles import READER
from verifier.scopes import TokenScope
from verifier.tokens import TOKEN_EXPIRED, TOKEN_REFUSED, token_create, token_revoke

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# A source tree for path citations: the file has three lines, so line 40 is past its end.
TREE_FILE = "notes/tunnel.md"
TREE_LINES = "# Cold Knap Tunnel\n\nThe tunnel is 402 m long.\n"
PAST_THE_END = f"Cold Knap Tunnel is 402 m long, see {TREE_FILE}:40 - the tunnel length."
ON_THE_LINE = f"Cold Knap Tunnel is 402 m long, see {TREE_FILE}:3 - the tunnel is 402 m long."


class Served:
    """A `manage.py mcp --http` process on the test database; what it wrote to its log, once stopped."""

    def __init__(self, log: Path, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{PATH}"
        self.log = log
        self._log_file = log.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "mcp", "--http", "--port", str(self.port)],
            cwd=settings.BASE_DIR,
            env={
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "config.settings.test",
                "DATABASE_URL": current_database_url(),
                **env,
            },
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
        )
        wait_for_port("127.0.0.1", self.port, 120)

    def stop(self) -> str:
        self.process.terminate()
        self.process.wait(30)
        self._log_file.close()
        return self.log.read_text()


@contextmanager
def served(log: Path, **env: str) -> Iterator[Served]:
    server = Served(log, **env)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop()


def session(url: str, token: str | None, talk: Callable[[Client], Awaitable[None]]) -> None:
    """Run `talk` with the SDK's client connected over HTTP with `token` (outside the test's thread)."""

    async def connected() -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = create_mcp_http_client(headers=headers, timeout=httpx2.Timeout(120))
        async with (
            http,
            Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as client,
        ):
            await talk(client)

    anyio.run(connected)


def refused_to_connect(url: str, token: str | None) -> str:
    """The message the server's refusal of a client reads as."""
    seen: list[str] = []

    async def talk(client: Client) -> None:
        await client.list_tools()

    try:
        session(url, token, talk)
    except* MCPError as errors:  # the client's task groups wrap the refusal of the handshake
        seen.extend(str(error) for error in _leaves(errors))
    assert seen, "the server let the client in"
    return seen[0]


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    data: dict[str, Any] = json.loads(text)
    return data


def reader_token(name: str) -> tuple[User, str]:
    user = User.objects.create_user(name, password="x")
    user.groups.add(Group.objects.get(name=READER))
    return user, token_create(user_id=user.pk, name="agent", scopes=list(TokenScope))[1]


def test_an_agent_with_a_token_searches_asks_and_checks_over_http(
    sample_garden: None, tmp_path: Path
) -> None:
    (tmp_path / "tree" / "notes").mkdir(parents=True)
    (tmp_path / "tree" / TREE_FILE).write_text(TREE_LINES)
    _, token = reader_token("http-reader")
    seen: dict[str, Any] = {}

    async def talk(client: Client) -> None:
        seen["tools"] = {tool.name for tool in (await client.list_tools()).tools}
        seen["search"] = await call(client, "search", query=TUNNEL)
        seen["refused"] = await call(client, "ask", question="What is the capital of France?")
        seen["check"] = await call(client, "check", text=WRONG_LENGTH)
        seen["past the end"] = await call(client, "check", text=PAST_THE_END)
        seen["on the line"] = await call(client, "check", text=ON_THE_LINE)

    with served(tmp_path / "server.log", CRITIC_SOURCE_TREE=str(tmp_path / "tree")) as server:
        session(server.url, token, talk)
        log = server.stop()

    assert seen["tools"] >= TOOLS
    assert any(p["title"] == TUNNEL and "402 m" in p["text"] for p in seen["search"]["passages"])

    refused = seen["refused"]
    assert refused["refused"] and refused["refusal_reason"] == REFUSAL_REASON
    assert refused["usage"]["input_tokens"] == refused["usage"]["output_tokens"] == 0

    checked = seen["check"]
    (claim,) = checked["claims"]
    assert claim["status"] == "contradicted", claim
    assert (
        claim["quote"] and checked["sources"][claim["source_index"] - 1]["title"] == TUNNEL
    )  # its own article
    assert claim["source_address"].startswith("/articles/cold-knap-tunnel/")

    (dropped,) = seen["past the end"]["path_citations"]
    assert (dropped["status"], dropped["reason"]) == (DROPPED, LINE_MISSING)
    assert dropped["reference"] == f"{TREE_FILE}:40 - the tunnel length"
    (kept,) = seen["on the line"]["path_citations"]
    assert (kept["status"], kept["reason"]) == (VERIFIED, LINE_MATCHES)

    assert "POST /mcp" in log and token not in log and token[len("gw_") :] not in log


def test_a_token_sees_what_its_user_sees_and_a_revoked_one_is_refused_at_once(
    sample_garden: None, tmp_path: Path
) -> None:
    user, token = reader_token("http-reader")
    Article.objects.filter(title=TUNNEL).update(withheld_at=timezone.now(), withheld_reason="made private")
    old, expired = token_create(user_id=user.pk, name="old")
    expires_at = timezone.now() - datetime.timedelta(days=1)
    ApiToken.objects.filter(pk=old.pk).update(expires_at=expires_at)
    seen: dict[str, Any] = {}

    async def talk(client: Client) -> None:
        seen["search"] = await call(client, "search", query=TUNNEL)
        seen["check"] = await call(client, "check", text=WRONG_LENGTH)
        read = await client.call_tool("read_article", {"title": TUNNEL})
        seen["read"] = (read.is_error, read.content[0].text)  # type: ignore[union-attr]
        listed = await client.read_resource("groundwork://articles")
        seen["listed"] = json.loads(listed.contents[0].text)  # type: ignore[union-attr]
        await anyio.to_thread.run_sync(revoke)  # mid-session, as on the account page
        try:
            await client.list_tools()
        except MCPError as error:
            seen["after revoking"] = str(error)

    def revoke() -> None:
        token_revoke(user_id=user.pk, token_id=ApiToken.objects.get(user=user, name="agent").pk)

    with served(tmp_path / "server.log") as server:
        session(server.url, token, talk)
        seen["revoked"] = refused_to_connect(server.url, token)
        seen["unknown"] = refused_to_connect(server.url, "gw_" + "x" * 43)
        seen["expired"] = refused_to_connect(server.url, expired)
        seen["none"] = refused_to_connect(server.url, None)
        log = server.stop()

    assert not any(p["title"] == TUNNEL or "402 m" in p["text"] for p in seen["search"]["passages"])
    assert not any(source["title"] == TUNNEL for source in seen["check"]["sources"])
    assert not any("402" in claim["quote"] for claim in seen["check"]["claims"])
    is_error, text = seen["read"]
    assert is_error and "No article" in text
    assert TUNNEL not in {article["title"] for article in seen["listed"]}

    assert TOKEN_REFUSED in seen["after revoking"]
    assert TOKEN_REFUSED in seen["revoked"] and TOKEN_REFUSED in seen["unknown"]
    assert TOKEN_EXPIRED.format(date=expires_at.date().isoformat()) in seen["expired"]
    assert TOKEN_MISSING in seen["none"]
    assert token not in log and token[len("gw_") :] not in log and "401" in log


def test_the_spend_of_an_agent_s_calls_is_in_the_one_ledger_for_its_user_and_token(
    sample_garden: None, tmp_path: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    fake_messages_api.reply_text("Cold Knap Tunnel is 402 m long [1].", input_tokens=2_000, output_tokens=100)
    user, token = reader_token("http-reader")
    seen: dict[str, Any] = {}

    async def talk(client: Client) -> None:
        seen["ask"] = await call(client, "ask", question="How long is Cold Knap Tunnel?")
        seen["refused"] = await call(client, "ask", question="What is the capital of France?")

    with served(
        tmp_path / "server.log", GROUNDWORK_TEST_FAKE_CLAUDE_URL=fake_messages_api.base_url
    ) as server:
        session(server.url, token, talk)

    assert seen["ask"]["generator"] == "claude" and "402" in seen["ask"]["answer"]
    assert seen["refused"]["refused"]
    answers = Spend.objects.filter(purpose=SpendPurpose.ANSWER)
    [spend] = answers  # the refusal spent nothing
    assert (spend.user, spend.token, spend.cost_usd) == (
        user,
        ApiToken.objects.get(user=user),
        Decimal("0.0075"),
    )
