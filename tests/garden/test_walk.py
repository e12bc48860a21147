"""The garden's walk: what is imported, what is private by its place, and what is not read and why. No database."""

import os
from pathlib import Path

import pytest

from garden.formats.files import NOT_A_FILE
from garden.walk import (
    FOLDER_UNREADABLE,
    IGNORE_UNREADABLE,
    LINK_DANGLING,
    LINK_FOLDER,
    LINK_LOOP,
    LINK_OUTSIDE,
    LINK_PRIVATE,
    LINK_SECOND_WAY,
    NAME_NOT_UTF8,
    RULES_FILE_MAX_BYTES,
    RULES_LINK,
    RULES_NOT_A_FILE,
    RULES_TOO_LARGE,
    article_files,
    garden_walk,
    image_files,
)
from tests.factories import garden_write


def names(paths: list[Path], folder: Path) -> list[str]:
    return [path.relative_to(folder).as_posix() for path in paths]


def reasons(walk_skipped: list[tuple[Path, str]], folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): reason for path, reason in walk_skipped}


def test_private_places_are_listed_apart_from_the_notes(tmp_path: Path) -> None:
    folder = garden_write(
        tmp_path / "g",
        {
            "Orchard.md": "Apples.",
            "Bees/Hives.MD": "Four hives.",
            ".obsidian/workspace.md": "settings",
            "_drafts/Plan.md": "a plan",
            "Templates/Daily.md": "a template",
            "logseq/bak/pages/Hives/2026-01-01.md": "a copy saved before the page was made private",
            "graph/logseq/version-files/base/Hives.md": "another copy",
            "logseq/custom.md": "Logseq's folder is not private, only its copies are",
            "Drafts/Unfinished.md": "ignored by the folder rule",
            ".gardenignore": "Drafts/\n",
            ".git/objects/info.md": "never walked",
            "Orchard.txt": "not a note",
        },
    )
    walk = garden_walk(folder, {".md"})
    assert names(walk.files, folder) == ["Bees/Hives.MD", "Orchard.md", "logseq/custom.md"]
    assert names(walk.private, folder) == [
        ".obsidian/workspace.md",
        "Drafts/Unfinished.md",
        "Templates/Daily.md",
        "_drafts/Plan.md",
        "graph/logseq/version-files/base/Hives.md",
        "logseq/bak/pages/Hives/2026-01-01.md",
    ]
    assert walk.skipped == []
    assert article_files(folder) == walk.files


def test_links_are_followed_only_to_files_inside_the_garden_outside_its_private_places(
    tmp_path: Path,
) -> None:
    outside = garden_write(tmp_path / "elsewhere", {"passwd.md": "root:x:0:0", "notes.txt": "text"})
    folder = garden_write(
        tmp_path / "g",
        {
            "Orchard.md": "Apples.",
            ".private/Pay.md": "salaries",
            "Plain.txt": "a text file",
            "Sub/Bees.md": "bees",
        },
    )
    (folder / "passwd.md").symlink_to("/etc/passwd")
    (folder / "outside.md").symlink_to(outside / "passwd.md")
    (folder / "pay-link.md").symlink_to(folder / ".private" / "Pay.md")
    (folder / "dangling.md").symlink_to(folder / "gone.md")
    (folder / "loop-a.md").symlink_to(folder / "loop-b.md")
    (folder / "loop-b.md").symlink_to(folder / "loop-a.md")
    (folder / "Orchard again.md").symlink_to("Orchard.md")
    (folder / "Plain.md").symlink_to("Plain.txt")
    (folder / "Sub" / "up").symlink_to("..")
    (folder / "elsewhere").symlink_to(outside)
    (folder / "private-folder").symlink_to(folder / ".private")

    walk = garden_walk(folder, {".md"})

    # The one link followed: the only way to a text inside the garden, read under the link's own name.
    assert names(walk.files, folder) == ["Orchard.md", "Plain.md", "Sub/Bees.md"]
    assert names(walk.private, folder) == [".private/Pay.md", "pay-link.md"]
    skipped = reasons(walk.skipped, folder)
    assert skipped == {
        "passwd.md": LINK_OUTSIDE.format(target="/etc/passwd"),
        "outside.md": LINK_OUTSIDE.format(target=outside.resolve() / "passwd.md"),
        "elsewhere": LINK_OUTSIDE.format(target=outside.resolve()),
        "pay-link.md": LINK_PRIVATE.format(target=".private/Pay.md"),
        "private-folder": LINK_PRIVATE.format(target=".private"),
        "dangling.md": LINK_DANGLING.format(target=folder / "gone.md"),
        "loop-a.md": LINK_LOOP,
        "loop-b.md": LINK_LOOP,
        "Orchard again.md": LINK_SECOND_WAY.format(target="Orchard.md"),
        "Sub/up": LINK_FOLDER.format(target="."),
    }


def test_a_link_to_an_image_outside_the_garden_is_no_image_of_it(tmp_path: Path) -> None:
    garden_write(tmp_path / "elsewhere", {"secret.png": b"\x89PNG"})
    folder = garden_write(tmp_path / "g", {"plan.png": b"\x89PNG", "Orchard.md": "Apples."})
    (folder / "secret.png").symlink_to(tmp_path / "elsewhere" / "secret.png")
    assert names(image_files(folder), folder) == ["plan.png"]


def test_special_files_and_names_that_are_not_utf8_are_skipped_with_their_reason(tmp_path: Path) -> None:
    folder = garden_write(tmp_path / "g", {"Orchard.md": "Apples.", "Folder.md/Inside.md": "a note in it"})
    os.mkfifo(folder / "pipe.md")  # reading it would wait for a writer for ever
    # A Latin-1 name, as an old sync from Windows may leave one.
    with open(os.fsencode(folder) + b"/caf\xe9.md", "wb") as note:
        note.write(b"Coffee.")
    walk = garden_walk(folder, {".md"})
    # A folder named like a note is a folder: its notes import.
    assert names(walk.files, folder) == ["Folder.md/Inside.md", "Orchard.md"]
    assert {reason for _, reason in walk.skipped} == {NOT_A_FILE.format(kind="named pipe"), NAME_NOT_UTF8}


def test_an_unreadable_gardenignore_holds_every_note_back_as_private(tmp_path: Path) -> None:
    folder = garden_write(tmp_path / "g", {"Orchard.md": "Apples."})
    (folder / ".gardenignore").mkdir()  # cannot be read as a file, whoever runs the test
    walk = garden_walk(folder, {".md"})
    assert walk.files == [] and names(walk.private, folder) == ["Orchard.md"]
    assert reasons(walk.skipped, folder) == {
        ".gardenignore": IGNORE_UNREADABLE.format(error=RULES_NOT_A_FILE.format(kind="folder"))
    }


def _ignore_linked(folder: Path) -> None:
    # A link to a file that would let every note through: it is not followed, wherever it points.
    (folder.parent / "elsewhere.txt").write_text("# nothing is ignored\n")
    (folder / ".gardenignore").symlink_to(folder.parent / "elsewhere.txt")


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (_ignore_linked, RULES_LINK),
        (lambda folder: os.mkfifo(folder / ".gardenignore"), RULES_NOT_A_FILE.format(kind="named pipe")),
        (
            lambda folder: (folder / ".gardenignore").write_text("# x\n" * (RULES_FILE_MAX_BYTES // 4 + 1)),
            RULES_TOO_LARGE,
        ),
    ],
    ids=["symlink", "named-pipe", "too-large"],
)
def test_a_gardenignore_that_is_a_link_a_pipe_or_too_long_is_not_read_and_holds_every_note_back(
    tmp_path: Path, make, why: str
) -> None:
    folder = garden_write(tmp_path / "g", {"Orchard.md": "Apples.", "Pay.md": "Salaries."})
    make(folder)  # a pipe with no writer would hold the walk for ever were it opened to be read
    walk = garden_walk(folder, {".md"})
    assert walk.files == [] and names(walk.private, folder) == ["Orchard.md", "Pay.md"]
    assert reasons(walk.skipped, folder) == {".gardenignore": IGNORE_UNREADABLE.format(error=why)}


def test_a_gardenignore_of_the_most_bytes_read_is_read(tmp_path: Path) -> None:
    folder = garden_write(tmp_path / "g", {"Orchard.md": "Apples.", "Pay.md": "Salaries."})
    rules = "Pay.md\n"
    (folder / ".gardenignore").write_text(rules + "#" * (RULES_FILE_MAX_BYTES - len(rules) - 1) + "\n")
    walk = garden_walk(folder, {".md"})
    assert names(walk.files, folder) == ["Orchard.md"] and names(walk.private, folder) == ["Pay.md"]


def test_an_unreadable_or_missing_folder_is_named_not_raised(tmp_path: Path) -> None:
    walk = garden_walk(tmp_path / "nowhere", {".md"})
    assert walk.files == [] and walk.skipped == [
        (tmp_path / "nowhere", FOLDER_UNREADABLE.format(error="No such file or directory"))
    ]
    if os.geteuid() == 0:
        pytest.skip("root reads a folder whatever its mode; the missing folder above takes the same path")
    folder = garden_write(tmp_path / "g", {"Orchard.md": "Apples.", "Locked/Pay.md": "salaries"})
    (folder / "Locked").chmod(0)
    try:
        walk = garden_walk(folder, {".md"})
    finally:
        (folder / "Locked").chmod(0o755)
    assert names(walk.files, folder) == ["Orchard.md"]
    assert reasons(walk.skipped, folder) == {"Locked": FOLDER_UNREADABLE.format(error="Permission denied")}


def test_a_single_note_is_a_walk_of_itself(tmp_path: Path) -> None:
    note = garden_write(tmp_path, {"Orchard.md": "Apples."}) / "Orchard.md"
    assert garden_walk(note, {".md"}).files == [note]
    assert image_files(note) == []
