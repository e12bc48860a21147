"""`path:line - description` citations, audited against the configured source tree.

The file must be inside the tree (no `..`, no absolute path, no symlink out of it, nothing hidden such as
`.env` or `.git/`; nothing else is ever opened) and the line must exist; the description's content words must
be on that line, else on a line within `LINE_RADIUS` of it (corrected), else the citation is dropped. Pure
Python: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Final

from claimcheck.critics.base import content_words
from claimcheck.critics.citation_gate.items import (
    CORRECTED,
    DROPPED,
    FILE_MISSING,
    FILE_UNREADABLE,
    FOUND_NEARBY,
    LINE_MATCHES,
    LINE_MISSING,
    NO_SOURCE_TREE,
    NOTHING_NEARBY,
    NOTHING_TO_CHECK,
    OUTSIDE_TREE,
    SUPPORT_THRESHOLD,
    VERIFIED,
    Item,
)

LINE_RADIUS: Final = 5
MAX_FILE_BYTES: Final = 2_000_000

# `garden/retrieval.py:42 - the gate`, optionally in backticks. The path needs a folder or an extension, and
# the dash needs spaces around it, so times ("10:30 - tea") and verses ("John 3:16 - ...") are not read as one.
_PATH_CITATION = re.compile(
    r"(?<![\w/.:~-])`?(?P<path>(?:\.{1,2}/|/|~/)?[\w.-]+(?:/[\w.-]+)*):(?P<line>\d{1,7})`?"
    r"[ \t]+[-–—][ \t]+(?P<description>[^\n`\[]+)"
)


def audit_paths(answer: str, source_tree: Path | None) -> Iterator[Item]:
    """One item per `path:line - description` citation in the answer, checked against `source_tree`."""
    lines_by_file: dict[Path, list[str] | None] = {}
    for match in _PATH_CITATION.finditer(answer):
        path = match.group("path")
        if "/" not in path and not re.search(r"\.[A-Za-z]\w*$", path):
            continue
        line = int(match.group("line"))
        description = match.group("description").strip().rstrip(".,;:")
        item = Item(
            kind="path",
            reference=f"{path}:{line} - {description}",
            start=match.start(),
            end=match.end(),
            status=DROPPED,
            reason="",
            fabricated=True,
        )
        yield _audit_path(item, path, line, description, source_tree, lines_by_file)


def _audit_path(
    item: Item,
    path: str,
    line: int,
    description: str,
    source_tree: Path | None,
    lines_by_file: dict[Path, list[str] | None],
) -> Item:
    if source_tree is None:
        item.reason = NO_SOURCE_TREE
        return item
    target = _inside(source_tree, path)
    if target is None:
        item.reason = OUTSIDE_TREE
        return item
    if target not in lines_by_file:
        lines_by_file[target] = _read_lines(target) if target.is_file() else None
    lines = lines_by_file[target]
    if lines is None:
        if target.is_file():
            # Too large or unreadable: the file is real, it just cannot be audited.
            item.reason, item.fabricated = FILE_UNREADABLE, False
        else:
            item.reason = FILE_MISSING
        return item
    if not 1 <= line <= len(lines):
        item.reason = LINE_MISSING
        return item
    wanted = content_words(description, code=True)
    if not wanted.words and not wanted.numbers:
        # "x" says nothing to check; the file and line exist, so the reference itself is real.
        item.status, item.reason, item.fabricated = VERIFIED, NOTHING_TO_CHECK, False
        return item
    candidates = []
    for number in range(max(1, line - LINE_RADIUS), min(len(lines), line + LINE_RADIUS) + 1):
        share = wanted.support(content_words(lines[number - 1], code=True))
        candidates.append((share, -abs(number - line), number))
    share, _, best = max(candidates)
    cited_share = next(candidate[0] for candidate in candidates if candidate[2] == line)
    if cited_share >= SUPPORT_THRESHOLD:
        item.status, item.reason, item.fabricated, item.score = VERIFIED, LINE_MATCHES, False, cited_share
    elif share >= SUPPORT_THRESHOLD:
        item.status, item.reason, item.fabricated, item.score = CORRECTED, FOUND_NEARBY, False, share
        item.corrected_to = {"path": path, "line": best}
    else:
        item.reason, item.score = NOTHING_NEARBY, share
    return item


def _inside(source_tree: Path, path: str) -> Path | None:
    """`path` resolved inside `source_tree`, or None when it is absolute, climbs out or links out of it, or is
    hidden (a name starting with a dot, as `.env`, `.run/` and `.git/` do).

    The checks on the text come first, so a path such as `../../etc/passwd` is refused without touching the
    file system; `resolve` then catches a symlink inside the tree that points out of it, or to a hidden file.
    Hidden files hold secrets, not sources: were they read, the gate's verdict on a description would tell
    whether their words are there.
    """
    if "\\" in path or path.startswith("~"):
        return None
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or _hidden(pure.parts):
        return None
    root = source_tree.resolve()
    target = (root / pure).resolve()
    if not target.is_relative_to(root) or _hidden(target.relative_to(root).parts):
        return None
    return target


def _hidden(parts: tuple[str, ...]) -> bool:
    return any(part.startswith(".") for part in parts)


def _read_lines(path: Path) -> list[str] | None:
    """The lines of a file inside the source tree, or None when it is too large or cannot be read."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
