"""A note's name keeps its audience inside an embed too: an Obsidian note A embeds B, B links and embeds C, and
C is for `hr`; A's page names C only to a reader in hr (one level down, as on B's own page)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from garden.audiences import members_add
from garden.selectors import NOTE_NOT_SHARED, NOTE_NOT_SHARED_LINK
from garden.sync import garden_import
from tests.factories import garden_write, member
from verifier.roles import READER

pytestmark = pytest.mark.django_db

C_TITLE, C_FILE, C_WORD = "Salary bands Ravelwick", "Zorvath pay", "Quillmartin"
C_SLUG = "zorvath-pay"
A_NOTE = "# Welcome\n\nWhat every member reads first.\n\n![[Handbook]]\n"
B_NOTE = (
    "# Handbook\n\nHow the cooperative announces its decisions.\n\n"
    f"Pay is set in [[{C_FILE}]], or [[{C_FILE}|the Kestrel bands]].\n\n![[{C_FILE}]]\n"
)
C_NOTE = f"---\naudience: hr\ntitle: {C_TITLE}\n---\nEvery engineer on band {C_WORD} gets eleven percent.\n"
# Everything that names C: its title, its file name and address, and the words B gives its link.
C_NAMES = (C_TITLE, C_FILE, C_SLUG, "Kestrel", C_WORD)


@pytest.fixture
def garden(tmp_path: Path) -> None:
    folder = garden_write(
        tmp_path / "vault",
        {".obsidian/app.json": "{}", "Welcome.md": A_NOTE, "Handbook.md": B_NOTE, f"{C_FILE}.md": C_NOTE},
    )
    members_add("hr", [])
    assert not garden_import([folder]).failures


def signed_in(name: str, *audiences: str) -> Client:
    return member(name, READER, *audiences)[1]


def page(client: Client, slug: str) -> str:
    response = client.get(f"/articles/{slug}/")
    assert response.status_code == 200
    return response.content.decode()


def named(html: str) -> list[str]:
    return [name for name in C_NAMES if name.lower() in html.lower()]


def test_a_reader_outside_hr_sees_nothing_of_c_on_a_s_page(garden: None) -> None:
    for client in (signed_in("bob"), Client()):
        welcome = page(client, "welcome")
        assert "How the cooperative announces its decisions." in welcome  # B is shown inside A
        assert not named(welcome), named(welcome)
        assert welcome.count(NOTE_NOT_SHARED_LINK) >= 2  # B's two links to C
        assert NOTE_NOT_SHARED in welcome  # B's embed of C, one level down
        assert not named(page(client, "handbook"))  # as B's own page shows it


def test_a_reader_in_hr_sees_c_named_on_a_s_page(garden: None) -> None:
    welcome = page(signed_in("alice", "hr"), "welcome")
    assert "How the cooperative announces its decisions." in welcome
    assert f'href="/articles/{C_SLUG}/"' in welcome and "the Kestrel bands" in welcome
    assert NOTE_NOT_SHARED_LINK not in welcome and NOTE_NOT_SHARED not in welcome
