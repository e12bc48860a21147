"""Personal API tokens: created and revoked by their owner, looked up on every API call that carries one.

A token is `gw_` and 43 random URL-safe characters (`secrets.token_urlsafe(32)`: 256 bits). It is shown once, when
created; only its SHA-256 digest is stored, so a copy of the database holds no token that works. The `gw_` shape
lets log scrubbing (`config.scrubbing`) find a token wherever one is written.
"""

from __future__ import annotations

import datetime
import hashlib
import re
import secrets
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from garden.errors import UserFacingError
from verifier.models import TOKEN_NAME_MAX_CHARS, ApiToken, SignInIdentity
from verifier.scopes import DEFAULT_SCOPES, TokenScope

TOKEN_PREFIX = "gw_"
TOKEN_SHAPE = re.compile(r"gw_[A-Za-z0-9_-]{43}")
PREFIX_SHOWN = 8  # "gw_" and five random characters: enough to tell one's tokens apart, too few to guess with
# last_used_at is a hint for its owner, not an audit log: one write a minute at most, not one a call.
LAST_USED_EVERY = datetime.timedelta(minutes=1)

TOKEN_NAME_EMPTY = "Give the token a name, e.g. the machine or program that will use it."
TOKEN_NAME_TOO_LONG = "A token's name is limited to {limit} characters; this has {length}."
TOKEN_SCOPES_NONE = "Tick what the token may do: read, ask or check (one or more)."
TOKEN_SCOPE_UNKNOWN = "A token's scopes are read, ask and check; {scope!r} is none of them."
TOKEN_REFUSED = (
    "This API token is unknown or revoked: create a new one on your account page (/accounts/tokens/)."
)
TOKEN_PASSWORD_CHANGED = (
    "This API token stopped working when its account's password changed: create a new one on your account page "
    "(/accounts/tokens/)."
)
TOKEN_ACCOUNT_INACTIVE = "This API token's account is deactivated: its tokens no longer work."
TOKEN_SIGN_IN_STALE = (
    "This API token's account signs in at the team's provider, which gives its groups, last read at its sign-in "
    "on {date}: sign in on the site again (your groups are read afresh) and the token works again."
)
TOKEN_EXPIRED = (
    "This API token expired on {date} (tokens last API_TOKEN_DAYS days): create a new one on your account page "
    "(/accounts/tokens/)."
)


class TokenError(UserFacingError):
    """A token that cannot be created as asked (its name empty or too long)."""


class TokenRefused(UserFacingError):
    """A token that does not act for anyone: unknown, revoked, expired, or its user's no longer."""


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def password_marker(password_hash: str) -> str:
    """What a token keeps of its user's password, to die when it changes (as Django's sessions do with
    `get_session_auth_hash`): a digest of the stored hash, which tells nothing of the password. Unkeyed, so
    that changing SECRET_KEY does not end every token."""
    return hashlib.sha256(password_hash.encode()).hexdigest()


@transaction.atomic
def token_create(*, user_id: int, name: str, scopes: Iterable[str] = DEFAULT_SCOPES) -> tuple[ApiToken, str]:
    """A new token for the user `user_id` named `name`, that may do `scopes` (`verifier.scopes`), and the token
    itself: the only time it can be read."""
    name = " ".join(name.split())
    if not name:
        raise TokenError(TOKEN_NAME_EMPTY)
    if len(name) > TOKEN_NAME_MAX_CHARS:
        raise TokenError(TOKEN_NAME_TOO_LONG.format(limit=TOKEN_NAME_MAX_CHARS, length=len(name)))
    scopes = set(scopes)
    if not scopes:
        raise TokenError(TOKEN_SCOPES_NONE)
    if unknown := sorted(scopes - set(TokenScope)):
        raise TokenError(TOKEN_SCOPE_UNKNOWN.format(scope=unknown[0]))
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = timezone.now()
    password = get_user_model().objects.values_list("password", flat=True).get(pk=user_id)
    token = ApiToken.objects.create(
        user_id=user_id,
        password_marker=password_marker(password),
        scopes=[scope.value for scope in TokenScope if scope in scopes],
        name=name,
        prefix=raw[:PREFIX_SHOWN],
        digest=_digest(raw),
        created_at=now,
        expires_at=now + datetime.timedelta(days=settings.API_TOKEN_DAYS),
    )
    return token, raw


def token_owned(*, user_id: int, token_id: int) -> ApiToken | None:
    """The user's own token of this id, revoked or not; None for another user's token, or none."""
    return ApiToken.objects.filter(user_id=user_id, pk=token_id).first()


def token_revoke(*, user_id: int, token_id: int) -> ApiToken | None:
    """Revoke one of the user's own tokens (at once: the next call with it is refused); None when the user has no
    token of this id. Revoking a revoked token changes nothing."""
    token = token_owned(user_id=user_id, token_id=token_id)
    if token is not None and token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def tokens_listed(*, user_id: int) -> list[ApiToken]:
    """The user's tokens, newest first, revoked ones too (they say so)."""
    return list(ApiToken.objects.filter(user_id=user_id).order_by("-created_at", "-pk"))


def _signed_in_long_ago(user_id: int) -> datetime.datetime | None:
    """When a member who signs in at the OIDC provider last did, if longer ago than API_TOKEN_SIGN_IN_DAYS: their
    groups, read only at sign-in, may have changed there since. None for a local account, or a recent sign-in."""
    if settings.API_TOKEN_SIGN_IN_DAYS <= 0:
        return None
    last = SignInIdentity.objects.filter(user_id=user_id).aggregate(last=Max("signed_in_at"))["last"]
    if last is None or timezone.now() - last <= datetime.timedelta(days=settings.API_TOKEN_SIGN_IN_DAYS):
        return None
    return last


def token_active(raw: str) -> ApiToken:
    """The token `raw` is, with its user loaded, when it is well formed, known, not revoked, not expired, and its
    user active with the password they had when it was made; marks it used (at most once a minute). Raises
    `TokenRefused` saying why not."""
    if not TOKEN_SHAPE.fullmatch(raw):
        raise TokenRefused(TOKEN_REFUSED)
    token = (
        ApiToken.objects.select_related("user").filter(digest=_digest(raw), revoked_at__isnull=True).first()
    )
    if token is None:
        raise TokenRefused(TOKEN_REFUSED)
    if not token.user.is_active:
        raise TokenRefused(TOKEN_ACCOUNT_INACTIVE)
    if not secrets.compare_digest(token.password_marker, password_marker(token.user.password)):
        raise TokenRefused(TOKEN_PASSWORD_CHANGED)
    if token.expired:
        raise TokenRefused(TOKEN_EXPIRED.format(date=token.expires_at.date().isoformat()))
    if (signed_in := _signed_in_long_ago(token.user_id)) is not None:
        raise TokenRefused(TOKEN_SIGN_IN_STALE.format(date=signed_in.date().isoformat()))
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_EVERY:
        token.last_used_at = now
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token
