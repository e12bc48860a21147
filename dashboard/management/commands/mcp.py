"""`python manage.py mcp [--as USERNAME]`: the MCP server over stdio, acting as one user."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.mcp_server import mcp_server

NO_SUCH_USER = "No active user named {username!r}: the server acts as a user of this site (--as USERNAME)."


class Command(BaseCommand):
    help = (
        "Serve the garden's tools (search, read_article, ask, verdict, check) to an agent over MCP on stdio, "
        "as USERNAME (its role, what it may see, its spend) or, without --as, as a visitor."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--as", dest="username", help="The user the agent acts as; without it, a visitor."
        )

    def handle(self, *args: Any, username: str | None, **options: Any) -> None:
        user: User | AnonymousUser = AnonymousUser()
        if username is not None:
            found = User.objects.filter(username=username, is_active=True).first()
            if found is None:
                raise CommandError(NO_SUCH_USER.format(username=username))
            user = found
        mcp_server(user).run("stdio")
