"""`python manage.py create_demo_accounts`: one account per role, each with a new random password, printed once.

For development only: it refuses to run unless DEBUG is on, so production settings never create accounts.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError

from verifier.roles import EDITOR, ROLES

REFUSED = "Demo accounts are for development: DEBUG is off, so none were created."


class Command(BaseCommand):
    help = (
        "Create (or reset) the demo accounts reader, editor and operator with random passwords (DEBUG only)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG:
            raise CommandError(REFUSED)
        self.stdout.write("Demo accounts (these passwords are shown only now):")
        for role in ROLES:
            password = secrets.token_urlsafe(12)
            user, _ = User.objects.get_or_create(username=role)
            user.set_password(password)
            # Editors and operators edit articles in the admin, which needs staff status.
            user.is_staff = role != ROLES[0]
            user.save()
            user.groups.set([Group.objects.get(name=role)])
            self.stdout.write(f"  {role:<9} password: {password}")
        self.stdout.write(
            f"Log in at /accounts/login/ ; editors ({EDITOR}) and operators can also use /admin/."
        )
