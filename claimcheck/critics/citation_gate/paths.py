"""`path:line` citations, audited against the configured source tree.

Two forms are read. `path:line - description`: the description's content words must be on the line. A
`path:line` in a sentence ("`refusal_decision` is in garden/answering/retrieval.py:120"): the code the sentence
names (its backticked spans, else its identifiers such as `RETRIEVAL_THRESHOLD` or `CriticInput`) must be on
the line; a sentence that names no code is checked for the file and line alone.

The file must be inside the tree (no `..`, no absolute path, nothing hidden such as `.env` or `.git/`: dropped
as outside the tree, by the citation's text alone; a symlink out of the tree or to a hidden file is dropped as
no such file, as if it were not there; nothing else is ever opened) and the line must exist; what the citation says must be on that
line, else on the nearest line within `LINE_RADIUS` of it that holds it (corrected: line drift), else the
citation is dropped. Pure Python: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Final

from claimcheck.critics.base import Words, content_words
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

# `garden/retrieval.py:42 - the gate`, optionally in backticks, or `garden/retrieval.py:42` alone in a sentence.
# The path needs a folder or an extension, and the dash needs spaces around it, so times ("10:30 - tea") and
# verses ("John 3:16 - ...") are not read as one.
_PATH_CITATION = re.compile(
    r"(?<![\w/.:~-])`?(?P<path>(?:\.{1,2}/|/|~/)?[\w.-]+(?:/[\w.-]+)*):(?P<line>\d{1,7})`?"
    r"(?:[ \t]+[-–—][ \t]+(?P<description>[^\n`\[]+))?"
)
# A bare `name.ext:N` in a sentence is a citation only with a source file's extension: `db.example.com:5432`
# and `api.local:8000` are addresses, `settings.py:40` is a citation.
_SUFFIXES = (
    "c cc cfg conf cpp css go h html ini java js json jsonl jsx kt md mjs php py pyi rb rs rst scss sh sql "
    "svelte swift toml ts tsx txt vue xml yaml yml"
)
SOURCE_SUFFIXES: Final = frozenset(_SUFFIXES.split())
# A sentence ends at a full stop, question or exclamation mark followed by a space, or at a line's end; a path's
# own dots are followed by letters, so `retrieval.py:12.` ends its sentence at the last one.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
# snake_case and UPPER_CASE with an underscore, camelCase, PascalCase of two words or more.
_IDENTIFIER = re.compile(r"(?<![\w.])(?:[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)(?![\w])")
_TOKEN = re.compile(r"\S+")
_NAME = re.compile(r"[\w.]+")


# How much of what a citation says one line of the file holds, from 0 to 1.
LineSupport = Callable[[str], float]


def audit_paths(answer: str, source_tree: Path | None) -> Iterator[Item]:
    """One item per `path:line` citation in the answer, checked against `source_tree`."""
    lines_by_file: dict[Path, list[str] | None] = {}
    for match in _PATH_CITATION.finditer(answer):
        path = match.group("path")
        line = int(match.group("line"))
        description = match.group("description")
        if description is None:
            if not _is_path(path):
                continue
            reference = f"{path}:{line}"
            support = _code_support(_sentence_code(answer, match.start(), match.end()))
        else:
            if "/" not in path and not re.search(r"\.[A-Za-z]\w*$", path):
                continue
            description = description.strip().rstrip(".,;:")
            reference = f"{path}:{line} - {description}"
            support = _words_support(description)
        item = Item(
            kind="path",
            reference=reference,
            start=match.start(),
            end=match.end(),
            status=DROPPED,
            reason="",
            fabricated=True,
        )
        yield _audit_path(item, path, line, support, source_tree, lines_by_file)


def _words_support(description: str) -> LineSupport | None:
    """The share of the description's content words (and all of its numbers) on a line; None when it has none."""
    wanted = content_words(description, code=True)
    if not wanted.words and not wanted.numbers:
        return None
    return lambda text: wanted.support(content_words(text, code=True))


def _sentence_code(answer: str, start: int, end: int) -> list[str]:
    """The code the sentence around a citation names: its backticked spans, else its identifiers; the names of
    files are not code, so they are left out."""
    begin = max((m.end() for m in _SENTENCE_END.finditer(answer, 0, start)), default=0)
    after = _SENTENCE_END.search(answer, end)
    sentence = answer[begin:start] + " " + answer[end : after.start() if after else len(answer)]
    spans = [span.strip() for span in _CODE_SPAN.findall(sentence) if not _is_path(span.strip())]
    if spans:
        return spans
    return _IDENTIFIER.findall(_TOKEN.sub(lambda token: " " if _is_path(token[0]) else token[0], sentence))


def _is_path(text: str) -> bool:
    """Whether a word names a file rather than code: a folder in it, or a source file's extension."""
    name = re.sub(r"(?::\d+)?[`'\"),.;:!?]*$", "", text.strip("`'\"("))
    if not name or any(char.isspace() for char in name):
        return False
    return "/" in name or ("." in name and name.rpartition(".")[2].lower() in SOURCE_SUFFIXES)


def _code_support(code: list[str]) -> LineSupport | None:
    """The share of the named code on a line; None when none is named.

    A name (`LINE_RADIUS`, `Thresholds.in_force`) must be there as a word of its own (a dotted one, or its last
    part): half of `CRITIC_SOURCE_TREE`'s words are in a comment about "the source tree" beside it. Code of
    several words (`def score(statuses)`) may be there in part: half its words and all its numbers.
    """
    if not code:
        return None
    wanted = [(span, None if _NAME.fullmatch(span) else content_words(span, code=True)) for span in code]

    def support(text: str) -> float:
        words = content_words(text, code=True)
        return sum(_code_on(span, of, text, words) for span, of in wanted) / len(wanted)

    return support


def _code_on(span: str, span_words: Words | None, text: str, words: Words) -> bool:
    """Whether a line holds one named piece of code: a name (no `span_words`) by `_name_on`, other code
    verbatim or by half its words and all its numbers."""
    if span_words is None:
        return _name_on(span, text)
    if span in text:
        return True
    return bool(span_words.words or span_words.numbers) and span_words.support(words) >= SUPPORT_THRESHOLD


def _name_on(name: str, text: str) -> bool:
    """Whether `text` holds `name` as a word of its own (`LINE_RADIUS`, not `MAX_LINE_RADIUS`), or a dotted
    name's last part: `Thresholds.in_force` is defined on the line `def in_force(cls)`."""
    last = name.rpartition(".")[2]
    return any(re.search(rf"(?<!\w){re.escape(part)}(?!\w)", text) for part in {name, last} if part)


def _audit_path(
    item: Item,
    path: str,
    line: int,
    support: LineSupport | None,
    source_tree: Path | None,
    lines_by_file: dict[Path, list[str] | None],
) -> Item:
    if source_tree is None:
        item.reason = NO_SOURCE_TREE
        return item
    named = _named_inside(path)
    if named is None:
        # Said by the citation's text alone: nothing of the tree is looked at, so nothing of it is told.
        item.reason = OUTSIDE_TREE
        return item
    target = _inside(source_tree, named)
    if target is None:
        # A link out of the tree or to a hidden file reads as no file at all: "not yours" as "not there".
        item.reason = FILE_MISSING
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
    if support is None:
        # "x", or a sentence naming no code, says nothing to check; the file and line exist, so the reference
        # itself is real.
        item.status, item.reason, item.fabricated = VERIFIED, NOTHING_TO_CHECK, False
        return item
    candidates = []
    for number in range(max(1, line - LINE_RADIUS), min(len(lines), line + LINE_RADIUS) + 1):
        share = support(lines[number - 1])
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


def _named_inside(path: str) -> PurePosixPath | None:
    """`path` as a relative path inside a tree, or None when its text alone puts it out of one: absolute,
    climbing out (`../../etc/passwd`) or hidden (a name starting with a dot, as `.env`, `.run/` and `.git/` do).
    No file is touched. Hidden files hold secrets, not sources: were they read, the gate's verdict on a
    description would tell whether their words are there."""
    if "\\" in path or path.startswith("~"):
        return None
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or _hidden(pure.parts):
        return None
    return pure


def _inside(source_tree: Path, path: PurePosixPath) -> Path | None:
    """`path` resolved inside `source_tree`, or None when a symlink on the way links out of it or to a hidden
    file."""
    root = source_tree.resolve()
    target = (root / path).resolve()
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
