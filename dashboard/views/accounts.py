"""Logging in: what a visitor sees once django-axes has locked out their username from their address."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
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
