"""`python manage.py audiences [add|remove NAME USER...]`: list audiences and their members, or change them."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from garden.audiences import UnknownUsers, listing, members_add, members_remove
from garden.models import Audience

NO_SUCH_AUDIENCE = "No such audience: {name}."


class Command(BaseCommand):
    help = "List audiences and their members; `add NAME USER...` or `remove NAME USER...` changes one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", nargs="?", choices=["add", "remove"])
        parser.add_argument("name", nargs="?")
        parser.add_argument("users", nargs="*")

    def handle(self, *args: Any, **options: Any) -> None:
        action, name, users = options["action"], options["name"], options["users"]
        if action is None:
            for line in listing():
                self.stdout.write(line)
            return
        if not name or not users:
            raise CommandError(f"Usage: audiences {action} NAME USER...")
        try:
            change = members_add if action == "add" else members_remove
            self.stdout.write(change(name, users))
        except UnknownUsers as error:
            raise CommandError(str(error)) from error
        except Audience.DoesNotExist as error:
            raise CommandError(NO_SUCH_AUDIENCE.format(name=name)) from error
