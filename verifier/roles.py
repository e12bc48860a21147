"""The three roles as Django groups: readers ask, editors also review claims and edit articles, operators also
run Verify-all, read the logs and retrain the local judge (or roll it back). Operators give and take them in the
admin or with `manage.py roles`; a sign-in provider's groups may give them too (`verifier.identities`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import Group, Permission
from django.db import transaction

from garden.audiences import NO_MEMBERS, users_named
from garden.models.content import VIEW_WITHHELD
from garden.readers import READ_EVERY_AUDIENCE

READER, EDITOR, OPERATOR = "reader", "editor", "operator"
ROLES = (READER, EDITOR, OPERATOR)
STAFF_ROLES = (EDITOR, OPERATOR)  # they work in the admin too, which asks for staff status

ASK = "garden.ask_question"
REVIEW = "verifier.review_claim"
RUN_VERIFY_ALL = "evaluation.run_verify_all"
VIEW_LOGS = "verifier.view_logs"
RETRAIN_JUDGE = "verifier.retrain_judge"

_READER = [ASK]
_EDITOR = [
    *_READER,
    REVIEW,
    "garden.view_article",
    "garden.change_article",
    "garden.view_articlerevision",
    "garden.change_articlerevision",
    "garden.view_topic",
    "garden.change_topic",
    "garden.add_topic",
    "garden.view_theme",
    "garden.change_theme",
]
_OPERATOR = [*_EDITOR, RUN_VERIFY_ALL, VIEW_LOGS, RETRAIN_JUDGE, VIEW_WITHHELD, READ_EVERY_AUDIENCE]
PERMISSIONS = {READER: _READER, EDITOR: _EDITOR, OPERATOR: _OPERATOR}


def roles_ensure(**kwargs: Any) -> None:
    """Create or update the three groups with their permissions (run after every migrate)."""
    for role, names in PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        permissions = []
        for name in names:
            app_label, codename = name.split(".")
            permission = Permission.objects.filter(
                content_type__app_label=app_label, codename=codename
            ).first()
            if permission is not None:
                permissions.append(permission)
        group.permissions.set(permissions)


UNKNOWN_ROLE = "No such role: {name} (the roles are {roles}). Nothing was changed."
GIVEN = "{role}: added {names}."
TAKEN = "{role}: removed {names}."


class UnknownRole(Exception):
    """A role name that is none of ROLES: the change is refused whole."""


def _group(role: str) -> Group:
    if role not in ROLES:
        raise UnknownRole(UNKNOWN_ROLE.format(name=role, roles=", ".join(ROLES)))
    if not Group.objects.filter(name=role).exists():
        roles_ensure()  # a database migrated before the roles were: made as migrate makes them
    return Group.objects.get(name=role)


def _staff_set(users: Iterable[Any]) -> None:
    """Editors and operators get staff status with their role, and lose it with their last such role (a
    superuser keeps it), as a sign-in provider's groups give and take it."""
    for user in users:
        staff = user.is_superuser or user.groups.filter(name__in=STAFF_ROLES).exists()
        if staff != user.is_staff:
            user.is_staff = staff
            user.save(update_fields=["is_staff"])


@transaction.atomic
def role_members_add(role: str, usernames: Iterable[str]) -> str:
    """Give `role` to these accounts; UnknownRole or UnknownUsers, with nothing changed, when one is not there."""
    group, users = _group(role), users_named(usernames)
    group.user_set.add(*(user.pk for user in users))
    if role in STAFF_ROLES:
        _staff_set(users)
    return GIVEN.format(role=role, names=", ".join(user.get_username() for user in users))


@transaction.atomic
def role_members_remove(role: str, usernames: Iterable[str]) -> str:
    """Take `role` from these accounts; UnknownRole or UnknownUsers, with nothing changed, when one is not there."""
    group, users = _group(role), users_named(usernames)
    group.user_set.remove(*(user.pk for user in users))
    if role in STAFF_ROLES:
        _staff_set(users)
    return TAKEN.format(role=role, names=", ".join(user.get_username() for user in users))


def roles_listing() -> list[str]:
    """One line per role, in ROLES' order: its name and its members' usernames."""
    members: dict[str, list[str]] = {role: [] for role in ROLES}
    for group in Group.objects.filter(name__in=ROLES).prefetch_related("user_set"):
        members[group.name] = sorted(user.get_username() for user in group.user_set.all())
    return [f"{role}: {', '.join(names) if names else NO_MEMBERS}" for role, names in members.items()]
