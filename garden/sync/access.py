"""Which audiences a note is for, as a sync decides it: the note's own mark (its front matter, else Logseq's
`audience::`), else the garden's folder rules in `.gardenaccess`, else the default audience (everyone).

`.gardenaccess`, at the garden's root, is a YAML map of gitignore-style patterns to an audience or a list of
them; the last pattern that matches a note's path wins, as in a `.gitignore`:

    hr/: hr
    board/**/minutes-*.md: [board, hr]

A file of its own rather than an `access:` map in `_garden.yaml`: a `_garden.yaml` switches off the topics and
themes derived from the notes (it is their override), and folder rules should not cost a garden its derived
topics; beside `.gardenignore`, it reads the same patterns. Anything written wrongly fails closed: a
`.gardenaccess` that cannot be read or is not such a map withholds every note it could apply to (those naming
no audience of their own), and a note for an audience there is none of is withheld; each is named among the
sync's failures, with its reason, on the logs page and in `/api/health`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

import pathspec
import yaml
from django.conf import settings

from garden.audience_marks import audience_mark
from garden.formats.note import ArticleFileError, ParsedArticle
from garden.models import Article, Audience
from garden.walk import rules_file_read

ACCESS_FILE = ".gardenaccess"
ACCESS_WRONG = (
    f"{ACCESS_FILE} is written wrongly ({{reason}}): write a map of folder patterns to audiences, e.g. "
    "`hr/: hr`; the notes it may apply to are withheld until it is fixed"
)
AUDIENCE_UNKNOWN = (
    "it is for an audience there is none of ({names}): add it (`python manage.py audiences add NAME USER...`, "
    "which releases the note at once) or correct the name; the note is withheld until then"
)
# The names in an AUDIENCE_UNKNOWN reason, wherever it is quoted (a sync's failures, a withheld article's reason).
_UNKNOWN_NAMES = re.compile(re.escape(AUDIENCE_UNKNOWN.partition("({names})")[0]) + r"\(([^)]*)\)")


@dataclass(frozen=True)
class AccessRules:
    """A garden's folder rules, in the order written, or why they could not be read (every note naming no
    audience of its own is then withheld)."""

    rules: tuple[tuple[pathspec.GitIgnoreSpec, tuple[str, ...]], ...] = ()
    error: str | None = None

    def audiences_of(self, relative: PurePosixPath) -> tuple[str, ...]:
        """The audiences the last rule matching `relative` (a path from the garden's root) names; none: none."""
        if self.error is not None:
            raise ArticleFileError(self.error)
        found: tuple[str, ...] = ()
        for spec, names in self.rules:
            if spec.match_file(relative.as_posix()):
                found = names
        return found


NO_RULES = AccessRules()


def access_rules(folder: Path) -> AccessRules:
    """The folder rules of the garden at `folder` (none without a `.gardenaccess`)."""
    try:
        # A link, a pipe or a file too long is refused: it fails closed, as one that cannot be read.
        written = rules_file_read(folder / ACCESS_FILE)
        if written is None:
            return NO_RULES
        text = written.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return AccessRules(error=ACCESS_WRONG.format(reason=getattr(error, "strerror", None) or str(error)))
    try:
        written = yaml.safe_load(text)
    except yaml.YAMLError:
        return AccessRules(error=ACCESS_WRONG.format(reason="not valid YAML"))
    if written is None:
        return NO_RULES
    if not isinstance(written, Mapping):
        return AccessRules(error=ACCESS_WRONG.format(reason="not a map"))
    rules = []
    for pattern, value in written.items():
        mark = audience_mark({"audiences": value})
        if not isinstance(pattern, str) or mark.error is not None or not mark.names:
            return AccessRules(error=ACCESS_WRONG.format(reason=f"{pattern}: {value!r}"))
        try:
            spec = pathspec.GitIgnoreSpec.from_lines([pattern])
        except ValueError as error:
            return AccessRules(error=ACCESS_WRONG.format(reason=str(error)))
        rules.append((spec, mark.names))
    return AccessRules(rules=tuple(rules))


def audiences_placed(note: ParsedArticle, relative: PurePosixPath, rules: AccessRules) -> ParsedArticle:
    """The note with the audiences it is for, in order: its own mark, the folder rules, the default audience
    (stored as none). Raises ArticleFileError when one of them is no audience there is."""
    names = note.audiences if note.audiences is not None else rules.audiences_of(relative)
    if not names or settings.GARDEN_DEFAULT_AUDIENCE in names:  # most notes: no query for them
        return replace(note, audiences=())
    unknown = set(names) - set(Audience.objects.filter(name__in=names).values_list("name", flat=True))
    if unknown:
        raise ArticleFileError(AUDIENCE_UNKNOWN.format(names=", ".join(sorted(unknown))))
    return replace(note, audiences=tuple(sorted(names)))


def audiences_unknown(reason: str) -> tuple[str, ...]:
    """The audiences a note was withheld for naming while there was none of them, as `reason` (why it was not
    imported, or why its article is withheld) says; none for any other reason."""
    found = _UNKNOWN_NAMES.search(reason)
    return tuple(found.group(1).split(", ")) if found else ()


def audiences_write(notes: Mapping[str, ParsedArticle]) -> int:
    """Give the articles of unchanged notes the audiences decided this sync (a folder rule or an audience may
    have changed while their text did not); a changed note's are written with its text. How many changed."""
    changed = 0
    slugs = list(notes)
    for start in range(0, len(slugs), 1000):
        part = slugs[start : start + 1000]
        for pk, slug, audiences in Article.objects.filter(slug__in=part).values_list(
            "pk", "slug", "audiences"
        ):
            wanted = list(notes[slug].audiences or ())
            if sorted(audiences) != wanted:
                changed += Article.objects.filter(pk=pk).update(audiences=wanted)
    return changed
