"""Signing in with the team's account in a real browser: the button on the login page, the provider's own sign-in
page (django-oidc-provider in a process of its own), back signed in with the audiences its groups claim gave, and
signing out of both."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.e2e.conftest import Site, screenshot
from tests.e2e.test_browser import csp_violations
from tests.oidc_issuer.issuer import PASSWORD, Issuer, Member

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PROVIDER_NAME = "Acme team"


@pytest.fixture
def team_site(tmp_path: Any, django_db_blocker: Any) -> Iterator[tuple[str, Issuer]]:
    """The site configured to sign in at a test provider, both on free ports."""
    site = Site(name="sign-in")
    issuer = Issuer(
        root=tmp_path / "issuer",
        redirect_uris=[f"{site.url}/accounts/sign-in/callback/"],
        post_logout_redirect_uris=[f"{site.url}/"],
        members=[Member("alice", ["hr-team", "garden-editors"], email="alice@example.org")],
    ).start()
    site.env.update(
        {
            **issuer.settings(),
            "OIDC_PROVIDER_NAME": PROVIDER_NAME,
            "OIDC_GROUP_AUDIENCES": "hr-team=hr,board-members=board",
            "OIDC_GROUP_ROLES": "garden-editors=editor",
        }
    )
    site.start()
    yield site.url, issuer
    site.stop()
    issuer.stop()


def test_a_member_signs_in_at_the_provider_and_out_again(team_site: tuple[str, Issuer], browser: Any) -> None:
    site, issuer = team_site
    page = browser.new_page()
    violations = csp_violations(page)
    page.goto(f"{site}/accounts/login/")
    page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()

    page.wait_for_url(f"{issuer.url}/accounts/login/**")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.click("form.issuer-login button")

    page.wait_for_url(f"{site}/")
    logout = page.get_by_role("button", name="Log out alice")
    assert logout.is_visible()
    screenshot(page, "signed-in-with-the-team")
    alice = User.objects.get(username="alice")
    assert list(alice.audiences.values_list("name", flat=True)) == ["hr"]
    assert sorted(alice.groups.values_list("name", flat=True)) == ["editor", "reader"]

    logout.click()
    page.wait_for_url(re.compile(rf"^{re.escape(site)}/(\?state=[^&]+)?$"))  # back from the provider
    assert page.get_by_role("link", name="Log in").is_visible()
    # The provider's session ended too: signing in again asks for the password.
    page.goto(f"{site}/accounts/login/")
    page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()
    page.wait_for_url(f"{issuer.url}/accounts/login/**")
    assert violations == []
    page.close()
