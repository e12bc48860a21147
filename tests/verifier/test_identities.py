"""Accounts from the sign-in provider: its groups claim sets audiences and roles at every sign-in, and takes away
only what it gave."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from garden.models import Audience
from verifier.identities import identity_sign_in

pytestmark = pytest.mark.django_db

ISSUER = "https://id.example.org"


@pytest.fixture(autouse=True)
def maps(settings: Any) -> None:
    settings.LOCAL_ACCOUNTS = True
    settings.OIDC_GROUPS_CLAIM = "groups"
    settings.OIDC_GROUP_AUDIENCES = {"hr-team": "hr", "board-members": "board"}
    settings.OIDC_GROUP_ROLES = {"garden-editors": "editor", "garden-ops": "operator"}
    settings.OIDC_DEFAULT_ROLE = "reader"


def names(values: Any) -> list[str]:
    return sorted(values.values_list("name", flat=True))


def test_memberships_the_claim_no_longer_gives_are_taken_away_and_those_given_by_hand_stay() -> None:
    user = identity_sign_in(
        issuer=ISSUER, claims={"sub": "u-1", "preferred_username": "dee", "groups": ["hr-team", "garden-ops"]}
    )
    assert names(user.audiences) == ["hr"] and names(user.groups) == ["operator", "reader"]
    assert user.is_staff  # operators work in the admin too
    # An operator gives the board audience and the editor role by hand.
    Audience.objects.get_or_create(name="board")[0].members.add(user)
    user.groups.add(Group.objects.get_or_create(name="editor")[0])

    again = identity_sign_in(issuer=ISSUER, claims={"sub": "u-1", "groups": ["chess-club"]})
    assert again == user
    assert names(user.audiences) == ["board"] and names(user.groups) == ["editor", "reader"]
    assert User.objects.get(pk=user.pk).is_staff  # still an editor, by hand

    identity_sign_in(issuer=ISSUER, claims={"sub": "u-3", "groups": ["garden-editors"]})
    dropped = identity_sign_in(issuer=ISSUER, claims={"sub": "u-3", "groups": []})
    assert names(dropped.groups) == ["reader"] and not dropped.is_staff


def test_a_claim_that_is_not_a_list_of_groups_gives_no_audience() -> None:
    user = identity_sign_in(issuer=ISSUER, claims={"sub": "u-2", "groups": {"hr-team": True}})
    assert names(user.audiences) == [] and names(user.groups) == ["reader"]


def test_the_same_subject_at_another_issuer_is_another_account() -> None:
    first = identity_sign_in(issuer=ISSUER, claims={"sub": "same", "preferred_username": "eve"})
    other = identity_sign_in(
        issuer="https://other.example.org", claims={"sub": "same", "preferred_username": "eve"}
    )
    assert first != other and (first.username, other.username) == ("eve", "eve-2")
    assert User.objects.filter(username__startswith="eve").count() == 2
