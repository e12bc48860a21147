"""Logging in: what a visitor sees once django-axes has locked out their username from their address; resetting a
forgotten password, when the site can send mail; a signed-in user's personal API tokens."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import PasswordResetView
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods

from verifier.models import TOKEN_NAME_MAX_CHARS
from verifier.tokens import TokenError, token_create, token_owned, token_revoke, tokens_listed

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
    """The signed-in user's personal API tokens: a form to create one, and the list with a revoke button each.
    A token just created is shown on the page its form answers, once: it is not stored anywhere it could be read
    again (not even the session), and the page is not cached."""
    created, error, name = "", "", ""
    if request.method == "POST":
        name = request.POST.get("name", "")
        try:
            _, created = token_create(user_id=_user_id(request), name=name)
            name = ""
        except TokenError as problem:
            error = problem.message
    context = {
        "tokens": tokens_listed(user_id=_user_id(request)),
        "created": created,
        "error": error,
        "name": name,
        "name_max_chars": TOKEN_NAME_MAX_CHARS,
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
