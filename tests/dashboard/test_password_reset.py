"""A forgotten password: without mail the reset page says it is off and what to do; with mail it sends a link;
never a server error."""

import pytest
from django.contrib.auth.models import User
from django.utils.html import escape

from dashboard.views.accounts import PASSWORD_RESET_OFF

pytestmark = pytest.mark.django_db


@pytest.fixture
def member() -> User:
    return User.objects.create_user("ada", email="ada@example.org", password="x")


def test_without_mail_the_reset_page_says_it_is_off_and_sends_nothing(client, member, mailoutbox) -> None:
    page = client.get("/accounts/password_reset/")
    assert page.status_code == 200 and escape(PASSWORD_RESET_OFF) in page.content.decode()
    assert "<form" not in page.content.decode()

    sent = client.post("/accounts/password_reset/", {"email": member.email})
    assert sent.status_code == 200 and escape(PASSWORD_RESET_OFF) in sent.content.decode()
    assert mailoutbox == []


def test_with_mail_the_reset_link_is_sent(client, member, settings, mailoutbox) -> None:
    settings.PASSWORD_RESET_BY_MAIL = True
    assert client.get("/accounts/password_reset/").status_code == 200
    sent = client.post("/accounts/password_reset/", {"email": member.email})
    assert sent.status_code == 302 and sent["Location"] == "/accounts/password_reset/done/"
    [mail] = mailoutbox
    assert mail.to == [member.email] and "/accounts/reset/" in mail.body


def test_a_mail_server_that_is_away_is_no_server_error(client, member, settings) -> None:
    settings.PASSWORD_RESET_BY_MAIL = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 1  # nothing listens
    sent = client.post("/accounts/password_reset/", {"email": member.email}, follow=True)
    assert sent.status_code == 200  # the page reads as for any address: it never tells which have accounts
