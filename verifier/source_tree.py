"""The source tree the citation gate audits `path:line` citations against (CRITIC_SOURCE_TREE), or none.

The gate tells whoever asks (an answer's critic findings, the API's and MCP's `check`) whether a file of the tree
is there and what is on which line, with no reader's rule: it is for a tree of code everyone may read. A
garden's notes are each for their own audiences, so a tree that is a garden's folder, lies inside one or holds
one is refused, and its citations are audited against no tree: each is dropped as `no-source-tree`, whatever
file it names, so a reader learns nothing of what is there. The operator is told why by `manage.py check`
(`verifier.checks`), once in the log, and on the logs page and `/api/health`. The rule is applied again each
time the tree is used, against the gardens known then, so a garden imported into it later is caught too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from django.conf import settings

from garden.models import Article

logger = logging.getLogger(__name__)

SOURCE_TREE_REFUSED: Final = (
    "CRITIC_SOURCE_TREE ({tree}) is refused: it {relation} the garden folder {garden}, whose notes are each for "
    "their own readers, and the citation gate would tell anyone who checks a text which files are there and "
    "what is on their lines. `path:line` citations are audited against no tree (each is dropped as "
    "no-source-tree) until CRITIC_SOURCE_TREE names a folder apart from every garden."
)
# The same for the health problems, which callers who are not operators read too: no folder is named.
SOURCE_TREE_REFUSED_UNNAMED: Final = (
    "CRITIC_SOURCE_TREE is refused: it is, lies inside or holds a garden's folder, so `path:line` citations "
    "are audited against no tree; operators see which in the log and with `manage.py check`."
)
IS: Final = "is"
LIES_INSIDE: Final = "lies inside"
HOLDS: Final = "holds"

# The refusals already logged by this process: the operator is told once, not on every check.
_logged: set[str] = set()


def garden_folders(*, from_database: bool = True) -> set[Path]:
    """Every folder that is or holds a garden, resolved: GARDEN_PATH, where git gardens are cloned
    (GARDEN_GIT_DIR) and, `from_database`, the folder each imported article records (`Article.garden`,
    retired ones too: their notes may still be on disk)."""
    named = [settings.GARDEN_PATH, settings.GARDEN_GIT_DIR]
    if from_database:
        named += Article.objects.exclude(garden="").values_list("garden", flat=True).distinct()
    return {Path(folder).resolve() for folder in named if folder}


def source_tree_refusal(tree: Path, gardens: Iterable[Path]) -> str:
    """Why the citation gate may not read `tree` (`SOURCE_TREE_REFUSED`), or "" when it may.

    A garden under a hidden folder of the tree (`.run/git`, the default clones' folder, in the project's own
    folder) does not count: the gate never reads a hidden file or folder."""
    root = tree.resolve()
    for garden in sorted(gardens):
        if root == garden:
            relation = IS
        elif root.is_relative_to(garden):
            relation = LIES_INSIDE
        elif garden.is_relative_to(root) and not any(
            part.startswith(".") for part in garden.relative_to(root).parts
        ):
            relation = HOLDS
        else:
            continue
        return SOURCE_TREE_REFUSED.format(tree=root, relation=relation, garden=garden)
    return ""


def source_tree_refused(*, from_database: bool = True) -> str:
    """Why CRITIC_SOURCE_TREE is refused, or "" when it is not (or names no tree)."""
    tree = settings.CRITIC_SOURCE_TREE
    if not tree:
        return ""
    return source_tree_refusal(Path(tree), garden_folders(from_database=from_database))


def critic_source_tree() -> Path | None:
    """The tree the citation gate may read: CRITIC_SOURCE_TREE, or None when it names none or is refused
    (the reason logged once per process)."""
    tree = settings.CRITIC_SOURCE_TREE
    if not tree:
        return None
    refusal = source_tree_refused()
    if refusal:
        if refusal not in _logged:
            _logged.add(refusal)
            logger.warning(refusal)
        return None
    return Path(tree)
