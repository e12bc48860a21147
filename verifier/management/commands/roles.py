"""`python manage.py roles [add|remove ROLE USER...]`: list who has which role (reader, editor, operator), or
give and take one."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from garden.audiences import UnknownUsers
from verifier.roles import ROLES, UnknownRole, role_members_add, role_members_remove, roles_listing


class Command(BaseCommand):
    help = (
        f"List who has which role ({', '.join(ROLES)}); `add ROLE USER...` or `remove ROLE USER...` gives or "
        "takes one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", nargs="?", choices=["add", "remove"])
        parser.add_argument("role", nargs="?")
        parser.add_argument("users", nargs="*")

    def handle(self, *args: Any, **options: Any) -> None:
        action, role, users = options["action"], options["role"], options["users"]
        if action is None:
            for line in roles_listing():
                self.stdout.write(line)
            return
        if not role or not users:
            raise CommandError(f"Usage: roles {action} ROLE USER...")
        try:
            change = role_members_add if action == "add" else role_members_remove
            self.stdout.write(change(role, users))
        except (UnknownRole, UnknownUsers) as error:
            raise CommandError(str(error)) from error
