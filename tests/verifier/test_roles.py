"""Operators give and take roles from the command line: the role's pages open and close with it, and a typo in
a role or a username changes nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from garden.audiences import NO_MEMBERS, UNKNOWN_USERS
from verifier.roles import EDITOR, OPERATOR, READER, ROLES, UNKNOWN_ROLE

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = StringIO()
    call_command("roles", *args, stdout=out)
    return out.getvalue()


def test_add_list_remove_and_the_review_queue_follows(client: Client) -> None:
    users = get_user_model().objects
    ada, bob = users.create_user("ada"), users.create_user("bob")
    assert _run().splitlines() == [f"{role}: {NO_MEMBERS}" for role in ROLES]
    client.force_login(ada)
    assert client.get("/review/").status_code in (302, 403)

    assert _run("add", EDITOR, "ada", "bob").strip() == f"{EDITOR}: added ada, bob."
    assert _run().splitlines() == [
        f"{READER}: {NO_MEMBERS}",
        f"{EDITOR}: ada, bob",
        f"{OPERATOR}: {NO_MEMBERS}",
    ]
    assert client.get("/review/").status_code == 200
    ada.refresh_from_db()
    assert ada.is_staff  # editors work in the admin too

    assert _run("remove", EDITOR, "ada").strip() == f"{EDITOR}: removed ada."
    assert client.get("/review/").status_code in (302, 403)
    ada.refresh_from_db()
    assert not ada.is_staff
    assert bob.groups.filter(name=EDITOR).exists()


def test_unknown_role_or_user_changes_nothing() -> None:
    get_user_model().objects.create_user("ada")
    with pytest.raises(CommandError) as raised:
        _run("add", "admin", "ada")
    assert str(raised.value) == UNKNOWN_ROLE.format(name="admin", roles=", ".join(ROLES))
    with pytest.raises(CommandError) as raised:
        _run("add", EDITOR, "ada", "nobody")
    assert str(raised.value) == UNKNOWN_USERS.format(names="nobody")
    assert _run().splitlines() == [f"{role}: {NO_MEMBERS}" for role in ROLES]
    with pytest.raises(CommandError):
        _run("remove", EDITOR)


def test_a_reader_given_a_role_by_hand_keeps_a_staff_flag_set_by_hand() -> None:
    ada = get_user_model().objects.create_user("ada", is_staff=True)
    _run("add", READER, "ada")
    _run("remove", READER, "ada")
    ada.refresh_from_db()
    assert ada.is_staff
