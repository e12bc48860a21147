"""Logging in: with a local password (unless LOCAL_ACCOUNTS is off) or with the team's account (OpenID Connect,
dashboard.oidc), and signing out of both; what a visitor sees once django-axes has locked out their username from
their address; resetting a forgotten password, when the site can send mail; a signed-in user's personal API
tokens."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView, PasswordResetView, redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render, resolve_url
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dashboard.oidc import SignInFailed, authorization_redirect, logout_url, token_verified
from verifier.identities import identity_sign_in
from verifier.models import TOKEN_NAME_MAX_CHARS
from verifier.scopes import DEFAULT_SCOPES, TokenScope
from verifier.tokens import TokenError, token_create, token_owned, token_revoke, tokens_listed

LOCAL_ACCOUNTS_OFF = "Passwords kept on this site are turned off: sign in with {provider} instead. Nothing was sent or checked."
SIGNED_OUT_HERE_ONLY = "You are signed out of this site. The sign-in provider did not answer, so you may still be signed in there."
# Where the session keeps what the sign-out needs: the ID token (the provider's end-session page asks for it).
SESSION_ID_TOKEN = "oidc_id_token"
SESSION_NEXT = "oidc_next"
PASSWORD_BACKEND = "verifier.identities.PasswordBackend"


def _sign_in_context() -> dict[str, Any]:
    """What the login page shows besides the password form: the provider's button, and whether passwords work."""
    return {
        "oidc_on": bool(settings.OIDC_ISSUER),
        "oidc_provider": settings.OIDC_PROVIDER_NAME,
        "local_accounts": settings.LOCAL_ACCOUNTS,
    }


def _local_accounts_off(request: HttpRequest) -> HttpResponse:
    message = LOCAL_ACCOUNTS_OFF.format(provider=settings.OIDC_PROVIDER_NAME)
    context = {**_sign_in_context(), "message": message, "next": request.POST.get("next", "")}
    return render(request, "registration/sign_in_failed.html", context, status=403)


def login_page(request: HttpRequest) -> HttpResponseBase:
    """The login page: the password form (while LOCAL_ACCOUNTS is on) and the "Sign in with ..." button (while
    OIDC_ISSUER is set). A password posted while local accounts are off is refused before it is checked."""
    if request.method == "POST" and not settings.LOCAL_ACCOUNTS:
        return _local_accounts_off(request)
    return LoginView.as_view(extra_context=_sign_in_context())(request)


def admin_login(request: HttpRequest) -> HttpResponseBase:
    """The admin's login: its own form while local accounts are on, else the site's login page (a GET) or the
    refusal (a password posted to it)."""
    if settings.LOCAL_ACCOUNTS:
        return admin.site.login(request)
    if request.method == "POST":
        return _local_accounts_off(request)
    return redirect_to_login(request.GET.get("next", reverse("admin:index")))


def _safe_next(request: HttpRequest, value: str) -> str:
    if value and url_has_allowed_host_and_scheme(
        value, {request.get_host()}, require_https=request.is_secure()
    ):
        return value
    return resolve_url(settings.LOGIN_REDIRECT_URL)


def _absolute(request: HttpRequest, path: str) -> str:
    return f"{settings.SITE_URL}{path}" if settings.SITE_URL else request.build_absolute_uri(path)


def _sign_in_failed(request: HttpRequest, failure: SignInFailed) -> HttpResponse:
    context = {**_sign_in_context(), "message": failure.message, "next": ""}
    return render(request, "registration/sign_in_failed.html", context, status=failure.status)


@require_GET
@never_cache
def sign_in_start(request: HttpRequest) -> HttpResponseBase:
    """Off to the provider's sign-in page; `next` is where the callback sends the user once signed in."""
    if not settings.OIDC_ISSUER:
        raise Http404("Signing in with a provider is not configured.")
    request.session[SESSION_NEXT] = _safe_next(request, request.GET.get("next", ""))
    try:
        return authorization_redirect(request, redirect_uri=_absolute(request, reverse("sign-in-callback")))
    except SignInFailed as failure:
        return _sign_in_failed(request, failure)


@require_GET
@never_cache
def sign_in_callback(request: HttpRequest) -> HttpResponseBase:
    """Back from the provider: the ID token verified, the user found or created by (issuer, subject), their
    audiences and roles set from its groups claim, and signed in."""
    if not settings.OIDC_ISSUER:
        raise Http404("Signing in with a provider is not configured.")
    try:
        claims, id_token = token_verified(request)
    except SignInFailed as failure:
        return _sign_in_failed(request, failure)
    user = identity_sign_in(issuer=settings.OIDC_ISSUER, claims=claims)
    next_url = request.session.get(SESSION_NEXT, "")
    login(request, user, backend=PASSWORD_BACKEND)  # a new session: the old one's key is not reused
    request.session[SESSION_ID_TOKEN] = id_token
    return redirect(_safe_next(request, next_url))


@require_POST
def sign_out(request: HttpRequest) -> HttpResponseBase:
    """Sign out here and, for an account signed in at the provider, there too (its end-session page, when it
    has one); the local session ends either way."""
    id_token = request.session.get(SESSION_ID_TOKEN)
    logout(request)
    home = resolve_url(settings.LOGOUT_REDIRECT_URL)
    if not id_token or not settings.OIDC_ISSUER:
        return redirect(home)
    try:
        url = logout_url(id_token=id_token, post_logout_redirect_uri=_absolute(request, home))
    except SignInFailed:
        messages.warning(request, SIGNED_OUT_HERE_ONLY)
        return redirect(home)
    return redirect(url or home)


LOCKED_OUT = (
    "Too many failed logins for this account from your address: logging in is paused for {minutes} minutes. "
    "An operator can lift it sooner (python manage.py axes_reset_username USERNAME)."
)


def locked_out(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """The login page again, saying why it refuses (django-axes's AXES_LOCKOUT_CALLABLE); 429 Too Many Requests."""
    minutes = round(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    context = {"form": AuthenticationForm(request), "locked_out": LOCKED_OUT.format(minutes=minutes)}
    response = render(request, "registration/login.html", context, status=429)
    response["Retry-After"] = str(round(settings.AXES_COOLOFF_TIME.total_seconds()))
    return response


PASSWORD_RESET_OFF = (
    "Password reset by mail is off: this site sends no mail. Ask an operator to set a new password for you "
    "(python manage.py changepassword USERNAME)."
)


def password_reset(request: HttpRequest) -> HttpResponseBase:
    """The password reset page, or, when the site sends no mail (no EMAIL_URL), a page that says it is off and
    what to do instead: no form that cannot work."""
    if not settings.PASSWORD_RESET_BY_MAIL:
        return render(request, "registration/password_reset_off.html", {"message": PASSWORD_RESET_OFF})
    # Django's view: a mail that cannot be sent is logged, and the page reads as if it went (so that the page
    # never tells whether an address has an account).
    return PasswordResetView.as_view()(request)


TOKEN_REVOKED = "Token “{name}” revoked: calls made with it are refused from now on."
TOKEN_NOT_FOUND = "You have no token of this number."


def _user_id(request: HttpRequest) -> int:
    """The signed-in user's id (a page behind `login_required`)."""
    assert request.user.pk is not None
    return int(request.user.pk)


@login_required
@require_http_methods(["GET", "POST"])
def tokens_page(request: HttpRequest) -> HttpResponse:
    """The signed-in user's personal API tokens: a form to create one (named, with what it may do: read and ask
    ticked to begin with), and the list with a revoke button each.
    A token just created is shown on the page its form answers, once: it is not stored anywhere it could be read
    again (not even the session), and the page is not cached."""
    created, error, name = "", "", ""
    ticked: list[str] = [scope.value for scope in DEFAULT_SCOPES]
    if request.method == "POST":
        name = request.POST.get("name", "")
        ticked = request.POST.getlist("scopes")
        try:
            _, created = token_create(user_id=_user_id(request), name=name, scopes=ticked)
            name, ticked = "", [scope.value for scope in DEFAULT_SCOPES]
        except TokenError as problem:
            error = problem.message
    context = {
        "tokens": tokens_listed(user_id=_user_id(request)),
        "created": created,
        "error": error,
        "name": name,
        "name_max_chars": TOKEN_NAME_MAX_CHARS,
        "token_days": settings.API_TOKEN_DAYS,
        "scopes": [(scope.value, scope.label, scope.value in ticked) for scope in TokenScope],
    }
    response = render(request, "dashboard/tokens.html", context, status=400 if error else 200)
    add_never_cache_headers(response)
    return response


@login_required
@require_http_methods(["GET", "POST"])
def token_revoke_page(request: HttpRequest, token_id: int) -> HttpResponse:
    """Revoking one of one's own tokens: GET asks to confirm, POST revokes it and goes back to the list."""
    if request.method == "POST":
        token = token_revoke(user_id=_user_id(request), token_id=token_id)
    else:
        token = token_owned(user_id=_user_id(request), token_id=token_id)
    if token is None:
        raise Http404(TOKEN_NOT_FOUND)
    if request.method == "POST":
        messages.success(request, TOKEN_REVOKED.format(name=token.name))
        return redirect("tokens")
    return render(request, "dashboard/token_revoke.html", {"token": token})
