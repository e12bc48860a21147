"""Who is reading: the audiences an account is in, and whether their role lets them read every audience's notes.

The one rule (`ArticleQuerySet.readable(reader)` and its neighbours in `garden.models`) takes a `Reader`. A
visitor who is not signed in is `ANONYMOUS`: the default audience's notes only. Operators read every audience's
notes (`READ_EVERY_AUDIENCE`). Work done for the garden as a whole rather than for a reader (a sync resolving
links between notes) acts as `ALL_AUDIENCES`, and says so where it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# What a command's `--as USERNAME` says when no account has that name (each command adds what it did not do).
NO_SUCH_ACCOUNT = "No such account: {username}."

# Operators read the notes of every audience (a role adds it, `verifier.roles`); superusers have every permission.
READ_EVERY_AUDIENCE = "garden.read_every_audience"


@dataclass(frozen=True)
class Reader:
    """The audiences a reader is in (a note for none of them is not theirs) and whether they read them all."""

    audiences: frozenset[str] = frozenset()
    reads_all: bool = False

    @property
    def key(self) -> str:
        """What tells this reader's garden from another's, for a cache key or a comparison: readers in the
        same audiences see the same notes."""
        return "*" if self.reads_all else ",".join(sorted(self.audiences))

    def may_read(self, audiences: list[str] | tuple[str, ...]) -> bool:
        """Whether a note written for `audiences` (empty: the default audience) is this reader's: the rule of
        `ArticleQuerySet.readable` for one article already loaded."""
        return self.reads_all or not audiences or not self.audiences.isdisjoint(audiences)


ANONYMOUS = Reader()
ALL_AUDIENCES = Reader(reads_all=True)


def reader_of(user: Any) -> Reader:
    """The reader a user (an account, or `AnonymousUser`) is: one query for an account's audiences."""
    if user is None or not user.is_authenticated:
        return ANONYMOUS
    if user.has_perm(READ_EVERY_AUDIENCE):
        return ALL_AUDIENCES
    return Reader(audiences=frozenset(user.audiences.values_list("name", flat=True)))


class NoSuchAccount(LookupError):
    """No account has the username a command was given (`account_named`)."""


def account_named(username: str) -> Any:
    """The account a command's `--as USERNAME` names, or None for "" (the anonymous reader); NoSuchAccount when
    no account has that name."""
    if not username:
        return None
    from django.contrib.auth import get_user_model  # here: `Reader` and its rule need no Django

    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NoSuchAccount(NO_SUCH_ACCOUNT.format(username=username))
    return user


def reader_described(user: Any) -> dict[str, Any]:
    """Whom a command asked as, for its output: the account (None: the anonymous reader) and the audiences whose
    notes it searched (`every_audience`: an operator's, all of them)."""
    reader = reader_of(user)
    return {
        "account": user.get_username() if user is not None else None,
        "audiences": sorted(reader.audiences),
        "every_audience": reader.reads_all,
    }
