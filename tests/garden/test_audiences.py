"""Operators add and remove audience members; a typo in a username changes nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from garden.audiences import NO_AUDIENCES, UNKNOWN_USERS
from garden.management.commands.audiences import NO_SUCH_AUDIENCE
from garden.models import Audience

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = StringIO()
    call_command("audiences", *args, stdout=out)
    return out.getvalue()


def test_add_list_remove() -> None:
    users = get_user_model().objects
    users.create_user("ada")
    users.create_user("bob")
    assert _run().strip() == NO_AUDIENCES
    _run("add", "hr", "ada", "bob")
    assert sorted(Audience.objects.get(name="hr").members.values_list("username", flat=True)) == [
        "ada",
        "bob",
    ]
    assert _run().strip() == "hr: ada, bob"
    _run("remove", "hr", "bob")
    assert _run().strip() == "hr: ada"


def test_unknown_user_changes_nothing() -> None:
    get_user_model().objects.create_user("ada")
    with pytest.raises(CommandError) as raised:
        _run("add", "hr", "ada", "nobody")
    assert str(raised.value) == UNKNOWN_USERS.format(names="nobody")
    assert not Audience.objects.exists()


def test_remove_from_unknown_audience() -> None:
    get_user_model().objects.create_user("ada")
    with pytest.raises(CommandError) as raised:
        _run("remove", "board", "ada")
    assert str(raised.value) == NO_SUCH_AUDIENCE.format(name="board")


def test_operator_sees_members_in_the_admin(client) -> None:
    operator = get_user_model().objects.create_superuser("root", password="x")
    _run("add", "hr", "root")
    client.force_login(operator)
    page = client.get("/admin/garden/audience/")
    assert page.status_code == 200
    assert "hr" in page.content.decode()
