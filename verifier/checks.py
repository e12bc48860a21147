"""System checks (`manage.py check`, and before `runserver` and `migrate`) on the verifier's settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks

from verifier.source_tree import source_tree_refused

SOURCE_TREE_REFUSED_ID = "verifier.W001"


@checks.register(checks.Tags.security)
def source_tree_check(
    app_configs: Sequence[AppConfig] | None, databases: Sequence[str] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """CRITIC_SOURCE_TREE is not a garden's folder, inside one or holding one (`verifier.source_tree`).

    A warning, not an error: the tree is refused wherever it is used whatever this says, and the rest of the site
    works. The folders of imported gardens are read from the database only when the check is given one
    (`migrate`, `check --database default`), as Django's own checks do; GARDEN_PATH and GARDEN_GIT_DIR always."""
    refusal = source_tree_refused(from_database=bool(databases) and "default" in (databases or ()))
    if not refusal:
        return []
    return [
        checks.Warning(
            refusal,
            hint="Point CRITIC_SOURCE_TREE at a folder of code that holds no garden, or leave it empty.",
            id=SOURCE_TREE_REFUSED_ID,
        )
    ]
