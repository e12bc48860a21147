"""Who calls an action, and the steps every action takes for its caller before it acts: a personal token's scope,
the caller's role, the rate limit, whose spend the model calls are.

A caller is the `HttpRequest` its surface received: the pages' and the API's own; the MCP server's over HTTP (its
token's user); on stdio and on the command line, one made for the account it runs as (`account_request`), from
this machine's address and with no token. The command line is the operator at the server (`Operator`, no
request): it may do anything, counts against no limit, and reads and asks as the account `--as` names (a
visitor without one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Final

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest

from dashboard.actions.refusals import Outcome, Refused
from dashboard.bearer import request_spender, scope_missing
from dashboard.claude_slots import CLAUDE_BUSY, CLAUDE_BUSY_RETRY_AFTER, ClaudeBusy, claude_slot
from dashboard.permissions import request_reader
from dashboard.ratelimit import RATE_LIMITED, rate_limited
from garden.readers import Reader, reader_of
from verifier.budget import spending_for
from verifier.scopes import TokenScope

# Where a server on stdio and the command line call from: the machine they run on (their rate-limit count).
MACHINE_ADDRESS: Final = "127.0.0.1"


@dataclass(frozen=True)
class Operator:
    """The command line: whoever runs the site, with no request to check, reading and asking as `user`."""

    user: AbstractBaseUser | None = None


Caller = HttpRequest | Operator


def account_request(user: AbstractBaseUser | AnonymousUser) -> HttpRequest:
    """The caller for a surface run as `user` on this machine (the MCP server on stdio, `ask --as`): its user,
    this machine's address, and no token."""
    request = HttpRequest()
    request.user = user  # type: ignore[assignment]  # (Django types it as its own User)
    request.META["REMOTE_ADDR"] = MACHINE_ADDRESS
    return request


def caller_reader(caller: Caller) -> Reader:
    """What the caller may read of the garden (a token sees what its owner sees; the operator, the default
    audience's notes, as a visitor does)."""
    return reader_of(caller.user) if isinstance(caller, Operator) else request_reader(caller)


def caller_user(caller: Caller) -> AbstractBaseUser | AnonymousUser | None:
    """The caller's account (anonymous for a visitor); the operator's `--as` account, or None."""
    return caller.user


def admit(
    caller: Caller,
    scope: TokenScope,
    *,
    may: Callable[[HttpRequest], bool] | None = None,
    forbidden: str = "",
    limit: str | None = None,
) -> None:
    """Refuse a caller whose token lacks `scope`, or who `may` not (by role or setting: `forbidden` says why),
    then count the call against the caller's `limit` scope ("ask", "check", "mark"), if any. The operator is
    refused nothing."""
    if isinstance(caller, Operator):
        return
    if (why := scope_missing(caller, scope)) is not None:
        raise Refused(Outcome.FORBIDDEN, why)
    if may is not None and not may(caller):
        raise Refused(Outcome.FORBIDDEN, forbidden, role_missing=True)
    if limit is not None and (wait := rate_limited(caller, limit)) is not None:
        raise Refused(Outcome.LIMITED, RATE_LIMITED, retry_after=wait)


def caller_slot(caller: Caller) -> AbstractContextManager[object] | None:
    """The Claude slot a request holds while a model writes or judges (none for the operator: no web thread)."""
    return None if isinstance(caller, Operator) else claude_slot()


@contextmanager
def spent_by(caller: Caller) -> Iterator[None]:
    """The model calls made inside are booked to the caller (its user and token); a busy Claude is refused."""
    try:
        if isinstance(caller, Operator):
            yield
        else:
            with spending_for(request_spender(caller)):
                yield
    except ClaudeBusy:
        raise Refused(Outcome.BUSY, CLAUDE_BUSY, retry_after=CLAUDE_BUSY_RETRY_AFTER) from None
