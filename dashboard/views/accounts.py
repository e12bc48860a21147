"""Logging in: what a visitor sees once django-axes has locked out their username from their address; resetting a
forgotten password, when the site can send mail."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import PasswordResetView
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render

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
