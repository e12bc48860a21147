"""URL wiring: the admin, the dashboard's pages and its JSON API."""

from django.contrib import admin
from django.urls import include, path

from dashboard.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("dashboard.urls")),
]
