"""URL wiring: the admin, the dashboard's pages and its JSON API."""

from django.contrib import admin
from django.urls import include, path

from dashboard.api import api
from dashboard.views.accounts import (
    admin_login,
    login_page,
    password_reset,
    sign_in_callback,
    sign_in_start,
    sign_out,
    token_revoke_page,
    tokens_page,
)

urlpatterns = [
    # Before the admin's own: with LOCAL_ACCOUNTS off, its password form is gone too.
    path("admin/login/", admin_login),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    # Before Django's own: the reset page is off, and says so, when the site sends no mail.
    path("accounts/password_reset/", password_reset, name="password_reset"),
    # Before Django's own: the password form is off with LOCAL_ACCOUNTS; signing out ends the provider's session.
    path("accounts/login/", login_page, name="login"),
    path("accounts/logout/", sign_out, name="logout"),
    path("accounts/sign-in/start/", sign_in_start, name="sign-in-start"),
    path("accounts/sign-in/callback/", sign_in_callback, name="sign-in-callback"),
    path("accounts/tokens/", tokens_page, name="tokens"),
    path("accounts/tokens/<int:token_id>/revoke/", token_revoke_page, name="token-revoke"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("dashboard.urls")),
]
