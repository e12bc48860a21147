"""`python manage.py mcp [--as USERNAME]`: the MCP server over stdio, acting as one user; with `--http`, over
streamable HTTP, each request acting as the user of its personal token.

Over stdio the user is read again at every call, as a request's would be: an audience taken from them, a role
removed or the account deactivated counts from the next call, not from the server's next start."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import uvicorn
from django.contrib.auth.models import AnonymousUser, User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import HttpRequest
from mcp.server.mcpserver.exceptions import ToolError

from dashboard.actions.callers import account_request
from dashboard.mcp_http import PATH, mcp_http_app
from dashboard.mcp_server import mcp_server

NO_SUCH_USER = "No active user named {username!r}: the server acts as a user of this site (--as USERNAME)."
USER_GONE = (
    "The user {username!r} this server acts as is deactivated or deleted: it answers no more calls. Run it as "
    "an active user (--as USERNAME)."
)
AS_OVER_HTTP = "--as is for stdio: over HTTP each request acts as the user of the personal token it carries."
SERVING = "MCP over streamable HTTP: http://{host}:{port}{path} (Authorization: Bearer gw_…)"
DEFAULT_PORT = 8001  # beside the site's 8000


class Command(BaseCommand):
    help = (
        "Serve the garden's tools (search, read_article, ask, verdict, check) to an agent over MCP on stdio, "
        "as USERNAME (its role, what it may see, its spend) or, without --as, as a visitor; with --http, over "
        "streamable HTTP, each request as the user of its personal API token."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--as", dest="username", help="The user the agent acts as; without it, a visitor."
        )
        parser.add_argument(
            "--http", action="store_true", help="Serve over streamable HTTP instead of stdio."
        )
        parser.add_argument(
            "--host",
            default=os.environ.get("MCP_HOST", "127.0.0.1"),
            help="The address to listen on over HTTP (MCP_HOST; default 127.0.0.1).",
        )
        parser.add_argument(
            "--port",
            type=int,
            default=int(os.environ.get("MCP_PORT", DEFAULT_PORT)),
            help=f"The port to listen on over HTTP (MCP_PORT; default {DEFAULT_PORT}).",
        )

    def handle(
        self, *args: Any, username: str | None, http: bool, host: str, port: int, **options: Any
    ) -> None:
        if http:
            if username is not None:
                raise CommandError(AS_OVER_HTTP)
            self.stdout.write(SERVING.format(host=host, port=port, path=PATH))
            self.stdout.flush()
            # Client addresses as Django reads them (RATE_LIMIT_TRUSTED_PROXIES), not rewritten by uvicorn.
            uvicorn.run(mcp_http_app(host), host=host, port=port, proxy_headers=False, log_level="info")
            return
        if username is None:
            mcp_server(lambda: account_request(AnonymousUser())).run("stdio")
            return
        found = User.objects.filter(username=username, is_active=True).first()
        if found is None:
            raise CommandError(NO_SUCH_USER.format(username=username))
        mcp_server(_user_now(found.pk, username)).run("stdio")


def _user_now(user_id: int, username: str) -> Callable[[], HttpRequest]:
    """A request for the user as they are at each call (read on the tool's own thread, by id: a new username
    does not change who it is); a tool error once they are deactivated or deleted."""

    def caller() -> HttpRequest:
        user = User.objects.filter(pk=user_id, is_active=True).first()
        if user is None:
            raise ToolError(USER_GONE.format(username=username))
        return account_request(user)

    return caller
