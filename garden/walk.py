"""What a garden folder holds: the files to import, the files private by their place, and the files that are not
read, each with a reason an operator can act on.

Private by place: files and folders whose name starts with '.' (`.obsidian/`, `.trash/`) or '_' (except the files
a format publishes, as Hugo's `_index.md`, a section's own page), the folders in PRIVATE_FOLDERS, a format's own
places (Logseq's copies of pages, `logseq/bak/`: `garden.formats.registry.private_place`) and the paths the
garden's `.gardenignore` matches (gitignore syntax). A symbolic link is followed only to a file inside the garden that is
not private by its own place; a link to a note the walk reaches anyway is not read twice. Nothing here raises
for one file: whatever cannot be read is named in `skipped`.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pathspec

from garden.formats import registry
from garden.formats.files import CANNOT_READ, NOT_A_FILE
from garden.skips import SkipKind as SkipKind  # callers and tests import it from here too
from text.markup import IMAGES

IGNORE_FILE = ".gardenignore"  # gitignore syntax, at the garden's root
# A garden's rules files (`.gardenignore`, `.gardenaccess`) are a few lines each: one this long is a mistake,
# and reading it whole at every sync would let a commit make each sync slow.
RULES_FILE_MAX_BYTES = 64 * 1024
# Folders that hold an editor's settings, deleted notes, templates or packages, never notes to publish.
PRIVATE_FOLDERS = frozenset({"templates", "node_modules"})
# Version control's own folders: their files are history's objects, never notes by name, and can be many.
NOT_WALKED = frozenset({".git", ".hg", ".svn"})

LINK_OUTSIDE = "is a link to {target}, outside the garden; links are followed only inside it"
LINK_PRIVATE = "is a link into a private place of the garden ({target}); it is left out"
LINK_DANGLING = "is a link to {target}, which does not exist"
LINK_LOOP = "is a link that loops back on itself"
LINK_SECOND_WAY = "is a link to {target}, which is imported under its own name; a note is imported once"
LINK_FOLDER = "is a link to the folder {target}; links to folders are not followed (its notes are read there)"
NAME_NOT_UTF8 = "its name is not valid UTF-8; rename it to import it"
FOLDER_UNREADABLE = "the folder cannot be read ({error}); the notes in it are left out until it can"
IGNORE_UNREADABLE = "cannot be read ({error}); every note is withheld as private until it can"
# Why a rules file is not read (`rules_file_read`), within its file's own message.
RULES_LINK = "a symbolic link, and only a regular file is read"
RULES_NOT_A_FILE = "a {kind}, and only a regular file is read"
RULES_TOO_LARGE = f"larger than {RULES_FILE_MAX_BYTES // 1024} KiB, the most read"


@dataclass(frozen=True)
class GardenWalk:
    files: list[Path] = field(default_factory=list)  # files to import (the suffixes asked), sorted
    # Files with those suffixes that exist but are private by place, links into such places among them.
    private: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # files not read, and why
    # The kind of each skipped file left out on purpose; a skipped file with no kind here is a failure.
    kinds: dict[Path, SkipKind] = field(default_factory=dict)


def shown(path: Path) -> str:
    """A path as text that can be printed and stored, even when its name is not valid UTF-8."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISFIFO(mode):
        return "named pipe"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file"


class RulesFileRefused(OSError):
    """A rules file that is there but is not read: its message says why (RULES_LINK, ...)."""


def rules_file_read(path: Path) -> bytes | None:
    """The bytes of a garden's rules file at `path` (`.gardenignore`, `.gardenaccess`), None when there is none.
    It is read only as a regular file of at most RULES_FILE_MAX_BYTES: a symbolic link (which could name any
    file on the machine), a pipe or device (which could hold a sync for ever) or a longer file raises
    RulesFileRefused; its caller fails closed, as for a file that cannot be read."""
    try:
        # O_NOFOLLOW: a link is refused, not followed; O_NONBLOCK: opening a named pipe does not wait for a writer.
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise RulesFileRefused(RULES_LINK) from None
        raise
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise RulesFileRefused(RULES_NOT_A_FILE.format(kind=_kind(mode)))
    with os.fdopen(descriptor, "rb") as file:
        data = file.read(RULES_FILE_MAX_BYTES + 1)
    if len(data) > RULES_FILE_MAX_BYTES:
        raise RulesFileRefused(RULES_TOO_LARGE)
    return data


class _Places:
    """The garden's rules of private places, applied to paths relative to its folder."""

    def __init__(self, folder: Path) -> None:
        self.formats = registry
        self.ignore_error: str | None = None
        lines: Iterable[str] = []
        try:
            written = rules_file_read(folder / IGNORE_FILE)
            lines = written.decode("utf-8", "replace").splitlines() if written is not None else []
        except OSError as error:
            self.ignore_error = error.strerror or str(error)
        try:
            self.ignored = pathspec.GitIgnoreSpec.from_lines(lines)
        except ValueError as error:  # a line that is no pattern
            self.ignore_error = str(error)
            self.ignored = pathspec.GitIgnoreSpec.from_lines([])

    def private(self, relative: PurePosixPath) -> bool:
        # Without the ignore file's rules nothing can be told public: fail closed.
        if self.ignore_error is not None:
            return True
        parts = relative.parts
        folders = [part.lower() for part in parts[:-1]]
        if any(part.startswith(".") for part in parts):
            return True
        if any(part.startswith("_") for part in parts[:-1]) or (
            parts[-1:] and parts[-1].startswith("_") and not self.formats.public_place(relative)
        ):
            return True
        if any(part in PRIVATE_FOLDERS for part in folders):
            return True
        if self.formats.private_place(relative):
            return True
        # A name that is not UTF-8 is matched as it is shown: some pattern engines (re2) take UTF-8 only.
        return self.ignored.match_file(shown(Path(relative)))


class _Walker:
    def __init__(self, folder: Path, suffixes: frozenset[str]) -> None:
        self.folder = folder
        self.root = folder.resolve()
        self.suffixes = suffixes
        self.places = _Places(folder)
        self.files: list[Path] = []
        self.private: list[Path] = []
        self.skipped: list[tuple[Path, str]] = []
        self.kinds: dict[Path, SkipKind] = {}
        if self.places.ignore_error is not None:
            error = self.places.ignore_error
            self.skipped.append((folder / IGNORE_FILE, IGNORE_UNREADABLE.format(error=error)))

    def walk(self) -> GardenWalk:
        folders = [self.folder]
        while folders:
            folder = folders.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = list(listing)
            except OSError as error:
                self.skipped.append((folder, FOLDER_UNREADABLE.format(error=error.strerror or error)))
                continue
            for entry in entries:
                path = folder / entry.name
                try:
                    if entry.is_symlink():
                        self._link(path)
                    elif entry.is_dir(follow_symlinks=False):
                        if entry.name not in NOT_WALKED:
                            folders.append(path)
                    elif path.suffix.lower() in self.suffixes:
                        self._file(path, entry.stat(follow_symlinks=False).st_mode)
                except OSError as error:
                    self.skipped.append((path, CANNOT_READ.format(error=error.strerror or error)))
        return GardenWalk(
            files=sorted(self.files),
            private=sorted(self.private),
            skipped=sorted(self.skipped),
            kinds=self.kinds,
        )

    def _leave_out(self, path: Path, reason: str, kind: SkipKind) -> None:
        self.skipped.append((path, reason))
        self.kinds[path] = kind

    def _relative(self, path: Path) -> PurePosixPath:
        return PurePosixPath(path.relative_to(self.folder).as_posix())

    def _file(self, path: Path, mode: int) -> None:
        if self.places.private(self._relative(path)):
            self.private.append(path)
        elif not stat.S_ISREG(mode):
            self._leave_out(path, NOT_A_FILE.format(kind=_kind(mode)), SkipKind.NOT_A_FILE)
        elif shown(path) != str(path):
            self.skipped.append((path, NAME_NOT_UTF8))
        else:
            self.files.append(path)

    def _link(self, path: Path) -> None:
        named = path.suffix.lower() in self.suffixes
        if self.places.private(self._relative(path)):
            if named:
                self.private.append(path)
            return
        try:
            target = path.resolve(strict=True)
        except FileNotFoundError:
            if named:
                self._leave_out(path, LINK_DANGLING.format(target=os.readlink(path)), SkipKind.LINK_DANGLING)
            return
        except RuntimeError:  # Python 3.11's word for a loop; later versions raise OSError(ELOOP)
            if named:
                self._leave_out(path, LINK_LOOP, SkipKind.LINK_LOOP)
            return
        except OSError as error:
            if named and "symbolic links" in str(error):
                self._leave_out(path, LINK_LOOP, SkipKind.LINK_LOOP)
            elif named:
                self.skipped.append((path, CANNOT_READ.format(error=error.strerror)))
            return
        mode = target.stat().st_mode
        if not named and not stat.S_ISDIR(mode):
            return
        if not target.is_relative_to(self.root):
            self._leave_out(path, LINK_OUTSIDE.format(target=shown(target)), SkipKind.LINK_OUTSIDE)
            return
        inside = PurePosixPath(target.relative_to(self.root).as_posix())
        if self.places.private(inside):
            if named and not stat.S_ISDIR(mode):
                self.private.append(path)
            self._leave_out(path, LINK_PRIVATE.format(target=shown(Path(inside))), SkipKind.LINK_PRIVATE)
        elif stat.S_ISDIR(mode):
            self._leave_out(path, LINK_FOLDER.format(target=shown(Path(inside))), SkipKind.LINK_FOLDER)
        elif not stat.S_ISREG(mode):
            self._leave_out(path, NOT_A_FILE.format(kind=_kind(mode)), SkipKind.NOT_A_FILE)
        elif target.suffix.lower() in self.suffixes:
            self._leave_out(
                path, LINK_SECOND_WAY.format(target=shown(Path(inside))), SkipKind.LINK_SECOND_WAY
            )
        elif shown(path) != str(path):
            self.skipped.append((path, NAME_NOT_UTF8))
        else:
            self.files.append(path)  # the only way to its text: read through the link, under the link's name


def garden_walk(folder: Path, suffixes: Iterable[str]) -> GardenWalk:
    """The garden's files with these suffixes (any case), told apart: to import, private by place, not read.

    A single file is a walk of itself. Links to folders are never followed: what they hold is either outside
    the garden or read where it is.
    """
    wanted = frozenset(suffix.lower() for suffix in suffixes)
    if folder.is_file():
        return GardenWalk(files=[folder])
    return _Walker(folder, wanted).walk()


def article_files(folder: Path) -> list[Path]:
    """The Markdown files of a garden folder (recursively), less what is private by place."""
    return garden_walk(folder, {".md"}).files


def image_files(folder: Path) -> list[Path]:
    """The images of a garden folder that its notes may show, less what is private by place."""
    return [] if folder.is_file() else garden_walk(folder, IMAGES).files
