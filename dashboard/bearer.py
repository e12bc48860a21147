"""A personal API token on a request: `Authorization: Bearer gw_…` makes an API call act as the token's user.

The call then has that user's role and sees what they see, as their session would (`request.user` is theirs,
so every permission check and the one visibility rule read it unchanged); it counts against the token's rate
limit, and what it spends is booked to the token. It needs no CSRF token: another site can make a browser send
its cookies, never an Authorization header of its choosing.
"""

from __future__ import annotations

from django.http import HttpRequest

from garden.errors import UserFacingError
from verifier.budget import Spender
from verifier.models import ApiToken
from verifier.scopes import TokenScope
from verifier.tokens import TOKEN_PREFIX, TokenRefused, token_active

TOKEN_MALFORMED = (
    "The Authorization header must read `Bearer gw_…`, with a personal API token from your account page "
    "(/accounts/tokens/)."
)
TOKEN_SCOPE_MISSING = (
    "This API token may not do this: it needs the `{scope}` scope, and the token has {scopes}. Make a token with "
    "`{scope}` ticked on your account page (/accounts/tokens/)."
)
_TOKEN_ATTRIBUTE = "api_token"


class BearerRefused(UserFacingError):
    """The request carries an Authorization header that names no active token: it is refused (401)."""


def bearer_authenticate(request: HttpRequest) -> ApiToken | None:
    """The token the request's Authorization header carries, its user made the request's user; None when the
    request carries no Authorization header, or one of another scheme (a proxy in front of the site may sign
    its users in with Basic). Raises `BearerRefused` for an empty bearer header or a token sent without its
    scheme, and for a token that is unknown, revoked, expired or of a deactivated user, saying which: such a
    call never falls back to acting as nobody, or as the session's user."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, raw = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        if TOKEN_PREFIX in header:  # a token without its scheme
            raise BearerRefused(TOKEN_MALFORMED)
        return None  # another scheme (a proxy's Basic sign-in, say): not ours, the call goes on as without it
    if not raw.strip():
        raise BearerRefused(TOKEN_MALFORMED)
    try:
        token = token_active(raw.strip())
    except TokenRefused as refused:
        raise BearerRefused(refused.message) from None
    request.user = token.user
    setattr(request, _TOKEN_ATTRIBUTE, token)
    return token


def request_token(request: HttpRequest) -> ApiToken | None:
    """The personal token this request was authenticated with, if it was."""
    token = getattr(request, _TOKEN_ATTRIBUTE, None)
    return token if isinstance(token, ApiToken) else None


def scope_missing(request: HttpRequest, scope: TokenScope) -> str | None:
    """Why the request may not do what needs `scope`: it came with a personal token not made for it (a call
    without a token, with a session or over stdio, has no scope to lack); None when it may."""
    token = request_token(request)
    if token is None or token.allows(scope):
        return None
    scopes = ", ".join(f"`{name}`" for name in token.scopes) or "none"
    return TOKEN_SCOPE_MISSING.format(scope=scope.value, scopes=scopes)


def request_spender(request: HttpRequest) -> Spender:
    """Who the Claude calls a request makes are spent for (`verifier.budget.spending_for`): its signed-in user,
    and the personal token it came with, if any; nobody for a visitor."""
    token = request_token(request)
    user_id = request.user.pk if request.user.is_authenticated else None
    return Spender(user_id=user_id, token_id=token.pk if token else None)
