"""The MCP server as an agent meets it: `manage.py mcp` spawned over stdio and driven by the SDK's own client.

The server is another process, so it sees only committed rows: the tests that ask or check commit theirs
(`transaction=True`, the sample garden imported again if an earlier such test emptied the database).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.utils import timezone
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from config.database import current_database_url
from dashboard.management.commands.mcp import USER_GONE
from dashboard.mcp_server import ASK_NOT_ALLOWED, CHECK_NOT_ALLOWED
from garden.answering.asking import REFUSAL_REASON
from garden.audiences import members_add, members_remove
from garden.models import Article
from verifier.roles import READER

pytestmark = pytest.mark.slow

TOOLS = {"search", "read_article", "ask", "verdict", "check"}
TUNNEL = "Cold Knap Tunnel"
WRONG_LENGTH = "Cold Knap Tunnel is 502 m long."  # the article gives 402 m


def server(*options: str, **env: str) -> StdioServerParameters:
    """`manage.py mcp` as an agent's configuration runs it, on the test database."""
    return StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp", *options],
        cwd=str(settings.BASE_DIR),
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": current_database_url(),
            **env,
        },
    )


def session(params: StdioServerParameters, talk: Callable[[Client], Awaitable[None]]) -> None:
    """Run `talk` with a client connected to the server (outside the test's thread: no ORM in there)."""

    async def connected() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            await talk(client)

    anyio.run(connected)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's result as the agent reads it (its JSON text); a tool error fails the test with its message."""
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    data: dict[str, Any] = json.loads(text)
    return data


async def refused_with(client: Client, tool: str, **arguments: Any) -> str:
    """The message of the tool error the call must be."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text
    return text


def reader(name: str = "agent-reader") -> User:
    user = User.objects.create_user(name, password="x")
    user.groups.add(Group.objects.get(name=READER))
    return user


@pytest.mark.django_db(transaction=True)
def test_a_visitor_s_agent_lists_searches_reads_and_asks(sample_garden: None) -> None:
    seen: dict[str, Any] = {}

    async def talk(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        seen["tools"] = tools
        seen["search"] = await call(client, "search", query=TUNNEL)
        seen["read"] = await call(client, "read_article", title="cold knap tunnel")
        seen["ask"] = await call(client, "ask", question="How long is Cold Knap Tunnel?")
        seen["verdict"] = await call(client, "verdict", answer_id=seen["ask"]["answer_id"])
        seen["refused"] = await call(client, "ask", question="What is the capital of France?")
        seen["check"] = await refused_with(client, "check", text=WRONG_LENGTH)
        seen["too long"] = await refused_with(client, "ask", question="x" * (settings.QUESTION_MAX_CHARS + 1))
        seen["no answer"] = await refused_with(client, "verdict", answer_id="not-an-id")
        resources = await client.list_resources()
        seen["resources"] = [resource.uri for resource in resources.resources]

    session(server(), talk)

    tools = seen["tools"]
    assert set(tools) >= TOOLS
    assert tools["search"].input_schema["required"] == ["query"]
    assert set(tools["check"].input_schema["properties"]) == {"text", "sources"}
    assert all(tools[name].description for name in TOOLS)

    passages = seen["search"]["passages"]
    tunnel = [p for p in passages if p["title"] == TUNNEL]
    assert tunnel and tunnel[0]["address"] == "/articles/cold-knap-tunnel/"
    assert "page" in tunnel[0]

    assert seen["read"]["title"] == TUNNEL and seen["read"]["address"] == "/articles/cold-knap-tunnel/"
    assert "402 m" in seen["read"]["text"]

    asked = seen["ask"]
    assert not asked["refused"] and "402" in asked["answer"]
    assert any(citation["title"] == TUNNEL for citation in asked["citations"])
    assert seen["verdict"]["status"] in {"pending", "running", "done"}
    assert seen["verdict"]["status"] == "done" or "verdict" in seen["verdict"]["wait"]

    refused = seen["refused"]
    assert refused["refused"] and refused["refusal_reason"] == REFUSAL_REASON
    assert refused["citations"] == []
    assert refused["usage"]["input_tokens"] == refused["usage"]["output_tokens"] == 0

    assert CHECK_NOT_ALLOWED in seen["check"]  # a visitor may not check (ANONYMOUS_CAN_CHECK is off)
    assert "Questions are limited to" in seen["too long"]
    assert "No answer with this id" in seen["no answer"]
    assert "groundwork://articles" in {str(uri) for uri in seen["resources"]}


@pytest.mark.django_db(transaction=True)
def test_a_reader_s_agent_checks_a_wrong_figure_and_then_never_sees_the_note_withheld(
    sample_garden: None,
) -> None:
    reader("agent-reader")
    seen: dict[str, Any] = {}

    async def check(client: Client) -> None:
        seen["garden check"] = await call(client, "check", text=WRONG_LENGTH)
        seen["given"] = await call(client, "check", text=WRONG_LENGTH, sources=["The tunnel is 402 m long."])

    session(server("--as", "agent-reader"), check)

    checked = seen["garden check"]
    (claim,) = checked["claims"]
    assert claim["status"] in {"contradicted", "unverified"}
    assert any(source["title"] == TUNNEL for source in checked["sources"])
    if claim["status"] == "contradicted":  # then by a quote of the tunnel's own article, with its address
        assert claim["quote"] and checked["sources"][claim["source_index"] - 1]["title"] == TUNNEL
        assert claim["source_address"].startswith("/articles/cold-knap-tunnel/")
    assert checked["compact"].startswith("[Hall: ")
    (given,) = seen["given"]["claims"]
    assert given["status"] in {"contradicted", "unverified"}

    Article.objects.filter(title=TUNNEL).update(withheld_at=timezone.now(), withheld_reason="made private")

    async def look(client: Client) -> None:
        seen["search"] = await call(client, "search", query=TUNNEL)
        seen["read"] = await refused_with(client, "read_article", title=TUNNEL)
        seen["by address"] = await refused_with(client, "read_article", address="/articles/cold-knap-tunnel/")
        seen["withheld check"] = await call(client, "check", text=WRONG_LENGTH)
        listed = await client.read_resource("groundwork://articles")
        seen["listed"] = json.loads(listed.contents[0].text)  # type: ignore[union-attr]

    session(server("--as", "agent-reader"), look)

    assert not any(p["title"] == TUNNEL or "402 m" in p["text"] for p in seen["search"]["passages"])
    assert "No article" in seen["read"] and "No article" in seen["by address"]
    assert not any(source["title"] == TUNNEL for source in seen["withheld check"]["sources"])
    assert not any("402" in claim["quote"] for claim in seen["withheld check"]["claims"])
    assert TUNNEL not in {article["title"] for article in seen["listed"]}

    User.objects.create_user("agent-without-a-role", password="x")

    async def roleless(client: Client) -> None:
        seen["roleless"] = await refused_with(client, "check", text=WRONG_LENGTH)

    session(server("--as", "agent-without-a-role"), roleless)

    assert "'agent-without-a-role' may not check text" in seen["roleless"]


@pytest.mark.django_db(transaction=True)
def test_on_stdio_an_audience_removed_or_the_account_deactivated_counts_from_the_next_call(
    sample_garden: None,
) -> None:
    member = reader("agent-member")
    members_add("signals", ["agent-member"])
    Article.objects.filter(title=TUNNEL).update(audiences=["signals"])
    seen: dict[str, Any] = {}

    def remove() -> None:
        members_remove("signals", ["agent-member"])  # as `manage.py audiences remove` does

    def deactivate() -> None:
        User.objects.filter(pk=member.pk).update(is_active=False)

    async def talk(client: Client) -> None:
        seen["member"] = await call(client, "read_article", title=TUNNEL)
        await anyio.to_thread.run_sync(remove)  # while the server runs
        seen["removed"] = await refused_with(client, "read_article", title=TUNNEL)
        seen["searched"] = await call(client, "search", query=TUNNEL)
        await anyio.to_thread.run_sync(deactivate)
        seen["deactivated"] = await refused_with(client, "search", query=TUNNEL)

    session(server("--as", "agent-member"), talk)

    assert "402 m" in seen["member"]["text"]
    assert "No article" in seen["removed"]
    assert not any(p["title"] == TUNNEL for p in seen["searched"]["passages"])
    assert USER_GONE.format(username="agent-member") in seen["deactivated"]


@pytest.mark.django_db
def test_with_anonymous_asking_off_a_visitor_s_agent_is_told_to_run_as_a_reader() -> None:
    seen: dict[str, str] = {}

    async def talk(client: Client) -> None:
        seen["ask"] = await refused_with(client, "ask", question="How long is Cold Knap Tunnel?")

    session(server(ANONYMOUS_CAN_ASK="false"), talk)

    assert ASK_NOT_ALLOWED in seen["ask"]


@pytest.mark.django_db
def test_the_server_refuses_to_start_as_a_user_who_does_not_exist() -> None:
    params = server("--as", "nobody-here")
    ran = subprocess.run(
        [params.command, *params.args],
        cwd=params.cwd,
        env=params.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode != 0 and "No active user named 'nobody-here'" in ran.stderr
