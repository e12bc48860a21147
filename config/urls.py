"""URL wiring: the admin, the dashboard's pages and its JSON API."""

from django.contrib import admin
from django.urls import include, path

from dashboard.api import api
from dashboard.views.accounts import password_reset, token_revoke_page, tokens_page

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    # Before Django's own: the reset page is off, and says so, when the site sends no mail.
    path("accounts/password_reset/", password_reset, name="password_reset"),
    path("accounts/tokens/", tokens_page, name="tokens"),
    path("accounts/tokens/<int:token_id>/revoke/", token_revoke_page, name="token-revoke"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("dashboard.urls")),
]
