"""Who is in which audience: operators add and remove members (the admin, `manage.py audiences`)."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser

from garden.models import Audience

UNKNOWN_USERS = "No such account: {names}. Nothing was changed."
ADDED = "{audience}: added {names}."
REMOVED = "{audience}: removed {names}."
NO_AUDIENCES = "No audiences yet."
NO_MEMBERS = "(no members)"


class UnknownUsers(Exception):
    """Some usernames name no account: the change is refused whole, so nothing is half done."""


def _users(usernames: Iterable[str]) -> list[AbstractBaseUser]:
    names = list(dict.fromkeys(usernames))
    found = {user.get_username(): user for user in get_user_model().objects.filter(username__in=names)}
    missing = [name for name in names if name not in found]
    if missing:
        raise UnknownUsers(UNKNOWN_USERS.format(names=", ".join(missing)))
    return [found[name] for name in names]


def members_add(audience_name: str, usernames: Iterable[str]) -> str:
    """Add accounts to an audience, creating the audience if it is new."""
    users = _users(usernames)
    audience, _ = Audience.objects.get_or_create(name=audience_name)
    audience.members.add(*(user.pk for user in users))
    return ADDED.format(audience=audience.name, names=", ".join(user.get_username() for user in users))


def members_remove(audience_name: str, usernames: Iterable[str]) -> str:
    """Remove accounts from an audience (the audience stays, as notes may still name it)."""
    users = _users(usernames)
    audience = Audience.objects.get(name=audience_name)
    audience.members.remove(*(user.pk for user in users))
    return REMOVED.format(audience=audience.name, names=", ".join(user.get_username() for user in users))


def listing() -> list[str]:
    """One line per audience: its name and its members' usernames."""
    lines = []
    for audience in Audience.objects.prefetch_related("members"):
        names = sorted(user.get_username() for user in audience.members.all())
        lines.append(f"{audience.name}: {', '.join(names) if names else NO_MEMBERS}")
    return lines or [NO_AUDIENCES]
