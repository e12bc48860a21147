"""Accounts from the team's OpenID Connect provider: the user an (issuer, subject) pair names, and the audiences and
roles its groups claim gives, set again at every sign-in. The flow itself (redirects, tokens, their checks) is the
pages' (dashboard.oidc); this module receives claims already verified.

Memberships the provider gave are recorded on the identity (`audiences_given`, `roles_given`), so that a sign-in
whose claim no longer gives one takes it away, and leaves alone those an operator gave by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from garden.models import Audience
from verifier.models import SignInIdentity
from verifier.roles import EDITOR, OPERATOR, ROLES

USERNAME_MAX_CHARS = 150  # Django's User.username
STAFF_ROLES = (EDITOR, OPERATOR)


class PasswordBackend(ModelBackend):
    """Django's username-and-password backend, which refuses every password while LOCAL_ACCOUNTS is off (the
    admin's login form too). Permission checks, for accounts signed in either way, are ModelBackend's own."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if not settings.LOCAL_ACCOUNTS:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


@dataclass(frozen=True)
class Memberships:
    """What a groups claim gives under the configured maps: audience names and role names."""

    audiences: frozenset[str]
    roles: frozenset[str]


def groups_in(claims: Mapping[str, Any]) -> list[str]:
    """The groups the configured claim lists; a claim that is missing or not a list of names gives none (fails
    closed: no audience is given on a claim that cannot be read)."""
    value = claims.get(settings.OIDC_GROUPS_CLAIM)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [group for group in value if isinstance(group, str)]
    return []


def memberships_for(groups: Iterable[str]) -> Memberships:
    """The audiences and roles the provider's groups give (OIDC_GROUP_AUDIENCES, OIDC_GROUP_ROLES), with
    OIDC_DEFAULT_ROLE for everyone."""
    groups = set(groups)
    audiences = {audience for group, audience in settings.OIDC_GROUP_AUDIENCES.items() if group in groups}
    roles = {role for group, role in settings.OIDC_GROUP_ROLES.items() if group in groups}
    if settings.OIDC_DEFAULT_ROLE:
        roles.add(settings.OIDC_DEFAULT_ROLE)
    return Memberships(audiences=frozenset(audiences), roles=frozenset(roles) & frozenset(ROLES))


def _free_username(wanted: str) -> str:
    """`wanted` if no account has it, else `wanted-2`, `wanted-3`...: a provider's user never takes over a local
    account that happens to share its name."""
    User = get_user_model()
    base = wanted[: USERNAME_MAX_CHARS - 8] or "member"
    candidate, number = base, 1
    while User.objects.filter(username=candidate).exists():
        number += 1
        candidate = f"{base}-{number}"
    return candidate


def _user_create(claims: Mapping[str, Any]) -> Any:
    User = get_user_model()
    wanted = str(claims.get("preferred_username") or claims.get("email") or claims["sub"])
    user = User(username=_free_username(wanted))
    user.set_unusable_password()  # signs in at the provider only
    user.save()
    return user


def _profile_update(user: Any, claims: Mapping[str, Any]) -> None:
    """Name and mail as the provider has them now."""
    fields = {"email": "email", "first_name": "given_name", "last_name": "family_name"}
    changed = []
    for field, claim in fields.items():
        value = claims.get(claim)
        if isinstance(value, str) and getattr(user, field) != value:
            setattr(user, field, value[:150] if field != "email" else value[:254])
            changed.append(field)
    if changed:
        user.save(update_fields=changed)


def _memberships_set(identity: SignInIdentity, given: Memberships) -> None:
    user = identity.user
    audiences_taken = set(identity.audiences_given) - given.audiences
    roles_taken = set(identity.roles_given) - given.roles
    user.audiences.remove(*Audience.objects.filter(name__in=audiences_taken))
    user.groups.remove(*Group.objects.filter(name__in=roles_taken))
    for name in sorted(given.audiences):
        audience, _ = Audience.objects.get_or_create(name=name)
        audience.members.add(user)
    for role in sorted(given.roles):
        group, _ = Group.objects.get_or_create(name=role)
        user.groups.add(group)
    # Editors and operators work in the admin too, which asks for staff status: given with their role, and taken
    # away with it when they hold neither any more (a staff flag an operator set by hand on a reader stays).
    staff = user.groups.filter(name__in=STAFF_ROLES).exists()
    if staff != user.is_staff and (staff or set(identity.roles_given) & set(STAFF_ROLES)):
        user.is_staff = staff
        user.save(update_fields=["is_staff"])
    identity.audiences_given = sorted(given.audiences)
    identity.roles_given = sorted(given.roles)


@transaction.atomic
def identity_sign_in(*, issuer: str, claims: Mapping[str, Any]) -> Any:
    """The user whose verified ID token `claims` are, created at their first sign-in, with their name, mail,
    audiences and roles set from the claims now."""
    subject = str(claims["sub"])
    identity = (
        SignInIdentity.objects.select_for_update()
        .select_related("user")
        .filter(issuer=issuer, subject=subject)
        .first()
    )
    if identity is None:
        identity = SignInIdentity(issuer=issuer, subject=subject, user=_user_create(claims))
    _profile_update(identity.user, claims)
    _memberships_set(identity, memberships_for(groups_in(claims)))
    identity.signed_in_at = timezone.now()
    identity.save()
    return identity.user
