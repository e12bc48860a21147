"""Who may do what: one place for the checks every page and API endpoint makes."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBase

from claimcheck.terms import JudgeMode
from garden.readers import Reader, reader_of
from verifier.marks import marker_of
from verifier.roles import ASK, REVIEW

View = TypeVar("View", bound=Callable[..., HttpResponseBase])


def request_reader(request: HttpRequest) -> Reader:
    """Who reads this request (its account, a personal token's owner, or a visitor): what the one rule is
    given on every page and API call. Read once a request."""
    reader: Reader | None = getattr(request, "_garden_reader", None)
    if reader is None:
        reader = reader_of(request.user)
        request._garden_reader = reader  # type: ignore[attr-defined]
    return reader


def request_marker(request: HttpRequest, *, start_session: bool = False) -> str | None:
    """Who marks answers and claims in this request: its account, or a visitor by their browser session (with
    `start_session`, one is started for a visitor who has none yet, so their mark can be theirs alone)."""
    session = request.session
    if start_session and not request.user.is_authenticated and session.session_key is None:
        session.save()
    return marker_of(request.user, session.session_key)


def may_ask(request: HttpRequest) -> bool:
    """Readers (and above) may ask; so may anyone when ANONYMOUS_CAN_ASK is on."""
    return bool(settings.ANONYMOUS_CAN_ASK or request.user.has_perm(ASK))


def may_check(request: HttpRequest) -> bool:
    """Readers (and above) may fact-check text; so may anyone when ANONYMOUS_CAN_CHECK is on."""
    return bool(settings.ANONYMOUS_CAN_CHECK or request.user.has_perm(ASK))


def may_see_rejected_quotes(request: HttpRequest) -> bool:
    """Editors and operators (who review claims) see the quotes the quote gate turned down, invented or saying
    too little of their claim, to judge the judges; readers and visitors see only quotes that passed it."""
    return bool(request.user.has_perm(REVIEW))


# Who sees a superseded revision's lines removed since (`garden.removed_lines`): whoever may read articles'
# history in the admin, the editors and operators.
VIEW_REVISION = "garden.view_articlerevision"


def may_see_removed_lines(request: HttpRequest) -> bool:
    """Editors and operators see an old revision whole; readers and visitors see it without the lines its
    current version no longer holds (docs/security.md: history keeps a removed line for editors)."""
    return bool(request.user.has_perm(VIEW_REVISION))


def check_mode(request: HttpRequest) -> JudgeMode | None:
    """The judge panel a fact-check runs: as configured for readers; the local judge alone for visitors who are
    not, so that they cannot spend the Claude budget."""
    return None if request.user.has_perm(ASK) else JudgeMode.LOCAL


def ask_required(view: View) -> View:
    """Pages for asking and reading answers: a visitor who may not ask is sent to log in (or refused)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if may_ask(request):
            return view(request, *args, **kwargs)
        if request.user.is_authenticated:
            raise PermissionDenied
        return redirect_to_login(request.get_full_path())

    return wrapped  # type: ignore[return-value]


def role_required(permission: str) -> Callable[[View], View]:
    """Editor and operator pages: log in first; logged in without the permission is 403."""

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not request.user.has_perm(permission):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return decorate
