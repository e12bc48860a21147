"""Signing in with the team's OpenID Connect provider, through Authlib's Django client (decision 0005).

Authlib finds the provider's endpoints and keys from the issuer (discovery), keeps each sign-in's state, nonce and
PKCE verifier in the session for one use, and checks the ID token: its signature against the provider's keys
(JWKS), its issuer, its audience (our client id), its expiry and its nonce. This module turns each way that can
fail into a `SignInFailed` that the pages show as it is: a message (a constant below) and a status.
"""

from __future__ import annotations

import functools
from typing import Any

import requests
from authlib.integrations.base_client import MismatchingStateError, OAuthError
from authlib.integrations.django_client import DjangoOAuth2App, OAuth
from django.conf import settings
from django.http import HttpRequest, HttpResponseRedirect
from joserfc.errors import BadSignatureError, ClaimError, ExpiredTokenError, JoseError

from garden.errors import UserFacingError

CLIENT_NAME = "team"

PROVIDER_DOWN = (
    "The sign-in provider ({provider}) did not answer, so signing in with it is not possible right now. "
    "Nothing was changed; try again in a few minutes, and tell an operator if it lasts."
)
PROVIDER_REFUSED = (
    "The sign-in provider did not sign you in ({reason}). Nothing was changed; start again below."
)
STATE_UNKNOWN = (
    "This sign-in answer does not belong to a sign-in started in this browser, or it was already used (a page "
    "reloaded, a link opened twice). It was refused; start again below."
)
BAD_SIGNATURE = (
    "The sign-in provider's token was not signed with the provider's keys: it was refused, and you are not "
    "signed in. Start again below; tell an operator if it happens again."
)
EXPIRED = (
    "The sign-in provider's token had expired when it arrived: it was refused, and you are not signed in. "
    "Start again below; if it happens every time, the server's or the provider's clock is wrong."
)
WRONG_AUDIENCE = (
    "The sign-in provider's token was issued for another application, not this site: it was refused, and you "
    "are not signed in. An operator should check OIDC_CLIENT_ID."
)
WRONG_ISSUER = (
    "The sign-in provider's token names another issuer than the one this site trusts: it was refused, and you "
    "are not signed in. An operator should check OIDC_ISSUER."
)
TOKEN_INVALID = (
    "The sign-in provider's token could not be checked ({reason}): it was refused, and you are not signed in. "
    "Start again below; tell an operator if it happens again."
)


class SignInFailed(UserFacingError):
    """A sign-in at the provider that did not end with a verified token: shown on its own page with `status`."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


@functools.cache
def _client(issuer: str, client_id: str, client_secret: str, scopes: tuple[str, ...], timeout: float) -> Any:
    """One client per configuration, keeping the provider's metadata and keys once fetched (unknown key ids are
    fetched again: the provider may rotate its keys)."""
    oauth = OAuth()
    return oauth.register(
        name=CLIENT_NAME,
        client_id=client_id,
        client_secret=client_secret,
        server_metadata_url=f"{issuer}/.well-known/openid-configuration",
        client_kwargs={
            "scope": " ".join(scopes),
            "code_challenge_method": "S256",
            "default_timeout": timeout,
        },
    )


def client() -> DjangoOAuth2App:
    """The provider's client, as the settings are now, with the issuer its metadata names checked."""
    scopes = tuple(dict.fromkeys(["openid", *settings.OIDC_SCOPES]))  # an ID token needs `openid`
    app = _client(
        settings.OIDC_ISSUER,
        settings.OIDC_CLIENT_ID,
        settings.OIDC_CLIENT_SECRET,
        scopes,
        settings.OIDC_TIMEOUT_SECONDS,
    )
    try:
        metadata = app.load_server_metadata()
    except (requests.RequestException, ValueError) as error:  # unreachable, an error status, or not JSON
        raise _provider_down() from error
    if metadata.get("issuer", "").rstrip("/") != settings.OIDC_ISSUER:
        raise SignInFailed(WRONG_ISSUER, status=502)
    return app


def _provider_down() -> SignInFailed:
    return SignInFailed(PROVIDER_DOWN.format(provider=settings.OIDC_PROVIDER_NAME), status=502)


def authorization_redirect(request: HttpRequest, *, redirect_uri: str) -> HttpResponseRedirect:
    """The redirect to the provider's sign-in page; the state, nonce and PKCE verifier wait in the session."""
    return client().authorize_redirect(request, redirect_uri)


def token_verified(request: HttpRequest) -> tuple[dict[str, Any], str]:
    """The verified claims of the ID token the provider's answer (`request`, at the callback) leads to, and the
    raw token (kept to end the provider's session at sign-out). Raises SignInFailed."""
    app = client()
    try:
        token = app.authorize_access_token(request)
    except MismatchingStateError as error:
        raise SignInFailed(STATE_UNKNOWN, status=400) from error
    except OAuthError as error:  # the provider's own refusal, at its page or at the token endpoint
        reason = error.description or error.error
        raise SignInFailed(PROVIDER_REFUSED.format(reason=reason), status=400) from error
    except requests.RequestException as error:
        raise _provider_down() from error
    except BadSignatureError as error:
        raise SignInFailed(BAD_SIGNATURE, status=403) from error
    except ExpiredTokenError as error:
        raise SignInFailed(EXPIRED, status=403) from error
    except ClaimError as error:
        raise _claim_refused(error) from error
    except (JoseError, ValueError) as error:  # not a JWT, an unknown key, a token response that is not JSON
        raise SignInFailed(TOKEN_INVALID.format(reason=type(error).__name__), status=403) from error
    userinfo = token.get("userinfo")
    if not userinfo or not userinfo.get("sub"):
        raise SignInFailed(TOKEN_INVALID.format(reason="no ID token"), status=403)
    return dict(userinfo), str(token["id_token"])


def _claim_refused(error: ClaimError) -> SignInFailed:
    claim = getattr(error, "claim", "")
    if claim == "aud" or claim == "azp":
        return SignInFailed(WRONG_AUDIENCE, status=403)
    if claim == "iss":
        return SignInFailed(WRONG_ISSUER, status=403)
    if claim == "nonce":
        return SignInFailed(STATE_UNKNOWN, status=400)
    return SignInFailed(TOKEN_INVALID.format(reason=f"claim {claim}"), status=403)


def logout_url(*, id_token: str, post_logout_redirect_uri: str) -> str | None:
    """The provider's end-session address for this sign-in, or None when the provider has none. Raises
    SignInFailed when the provider does not answer."""
    app = client()
    if not app.server_metadata.get("end_session_endpoint"):
        return None
    logout = app.create_logout_url(post_logout_redirect_uri=post_logout_redirect_uri, id_token_hint=id_token)
    return str(logout["url"])
