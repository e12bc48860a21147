"""Every form is protected against cross-site request forgery: a POST without the token is refused."""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

pytestmark = pytest.mark.django_db

FORMS = ["/", "/review/claims/1/decide/", "/operators/runs/", "/accounts/login/", "/accounts/logout/"]


def test_posts_without_the_csrf_token_are_refused():
    client = Client(enforce_csrf_checks=True)
    user = User.objects.create_user("op", password="x")
    user.groups.add(Group.objects.get(name="operator"))
    client.force_login(user)
    for path in FORMS:
        assert client.post(path, {"question": "When did Ashcombe station reopen?"}).status_code == 403, path


def test_the_pages_carry_the_token_for_forms_and_htmx(client):
    html = client.get("/").content.decode()
    assert 'name="csrfmiddlewaretoken"' in html and 'hx-headers=\'{"x-csrftoken"' in html
