"""Who is in which audience: operators add and remove members (the admin, `manage.py audiences`). Adding to an
audience releases at once the notes withheld for naming it while there was none of it (`garden.sync.releasing`)."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser

from garden.models import Audience
from garden.sync.releasing import notes_release

UNKNOWN_USERS = "No such account: {names}. Nothing was changed."
ADDED = "{audience}: added {names}."
REMOVED = "{audience}: removed {names}."
NO_AUDIENCES = "No audiences yet."
NO_MEMBERS = "(no members)"
RELEASED = "Released {count} note(s) withheld for naming {audience}: {titles}."
NONE_RELEASED = (
    "Released no note: those withheld for naming {audience} are withheld for another reason too (see the "
    "failures of the sync on the logs page)."
)
RELEASE_REFUSED = "The sync that would release them changed nothing: {reason}"
TITLES_SHOWN = 10  # a release's titles named in full; the rest are counted


class UnknownUsers(Exception):
    """Some usernames name no account: the change is refused whole, so nothing is half done."""


def users_named(usernames: Iterable[str]) -> list[AbstractBaseUser]:
    """The accounts of these usernames, in order; UnknownUsers naming those that have none."""
    names = list(dict.fromkeys(usernames))
    found = {user.get_username(): user for user in get_user_model().objects.filter(username__in=names)}
    missing = [name for name in names if name not in found]
    if missing:
        raise UnknownUsers(UNKNOWN_USERS.format(names=", ".join(missing)))
    return [found[name] for name in names]


def members_add(audience_name: str, usernames: Iterable[str]) -> str:
    """Add accounts to an audience, creating the audience if it is new, and release the notes withheld for
    naming it (`notes_release`): what was done, a line a change."""
    users = users_named(usernames)
    audience, _ = Audience.objects.get_or_create(name=audience_name)
    audience.members.add(*(user.pk for user in users))
    lines = [ADDED.format(audience=audience.name, names=", ".join(user.get_username() for user in users))]
    released, report = notes_release(audience=audience.name)
    if report is None:
        return "\n".join(lines)
    lines += [RELEASE_REFUSED.format(reason=reason) for _, reason in report.refused]
    if released:
        titles = [article.title for article in released[:TITLES_SHOWN]]
        if len(released) > TITLES_SHOWN:
            titles.append(f"and {len(released) - TITLES_SHOWN} more")
        lines.append(RELEASED.format(count=len(released), audience=audience.name, titles=", ".join(titles)))
    elif not report.refused:
        lines.append(NONE_RELEASED.format(audience=audience.name))
    return "\n".join(lines)


def members_remove(audience_name: str, usernames: Iterable[str]) -> str:
    """Remove accounts from an audience (the audience stays, as notes may still name it)."""
    users = users_named(usernames)
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
