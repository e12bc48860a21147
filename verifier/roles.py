"""The three roles as Django groups: readers ask, editors also review claims and edit articles, operators also
run Verify-all, read the logs and retrain the local judge (or roll it back)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, Permission

from garden.models import VIEW_WITHHELD
from garden.readers import READ_EVERY_AUDIENCE

READER, EDITOR, OPERATOR = "reader", "editor", "operator"
ROLES = (READER, EDITOR, OPERATOR)

ASK = "garden.ask_question"
REVIEW = "verifier.review_claim"
RUN_VERIFY_ALL = "evaluation.run_verify_all"
VIEW_LOGS = "verifier.view_logs"
RETRAIN_JUDGE = "verifier.retrain_judge"

_READER = [ASK]
_EDITOR = [
    *_READER,
    REVIEW,
    "garden.view_article",
    "garden.change_article",
    "garden.view_articlerevision",
    "garden.change_articlerevision",
    "garden.view_topic",
    "garden.change_topic",
    "garden.add_topic",
    "garden.view_theme",
    "garden.change_theme",
]
_OPERATOR = [*_EDITOR, RUN_VERIFY_ALL, VIEW_LOGS, RETRAIN_JUDGE, VIEW_WITHHELD, READ_EVERY_AUDIENCE]
PERMISSIONS = {READER: _READER, EDITOR: _EDITOR, OPERATOR: _OPERATOR}


def roles_ensure(**kwargs: Any) -> None:
    """Create or update the three groups with their permissions (run after every migrate)."""
    for role, names in PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        permissions = []
        for name in names:
            app_label, codename = name.split(".")
            permission = Permission.objects.filter(
                content_type__app_label=app_label, codename=codename
            ).first()
            if permission is not None:
                permissions.append(permission)
        group.permissions.set(permissions)
