"""What an agent reads of an article is what its reader's page shows: a shared note's link to, or embed of, a
note of an audience the reader is not in names nothing of it, through `read_article` and the article resource."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError

from dashboard.actions.callers import account_request
from dashboard.mcp_server import GardenTools
from garden.audiences import members_add
from garden.selectors import NOTE_NOT_SHARED_LINK
from garden.sync import garden_import
from tests.factories import garden_write, member
from verifier.roles import READER

pytestmark = pytest.mark.django_db

HR_TITLE, HR_WORD, HR_FILE = "Salary bands Ravelwick", "Quillmartin", "Zorvath pay"
SHARED = (
    "# Handbook\n\nThe handbook says how the cooperative announces its decisions.\n\n"
    f"![[{HR_FILE}]]\n\nRead [[{HR_FILE}|the pay bands]] and [its notes](hr/{HR_FILE.replace(' ', '%20')}.md)."
)
HR_NOTE = f"---\naudience: hr\ntitle: {HR_TITLE}\n---\nEvery engineer on band {HR_WORD} gets eleven percent."


@pytest.fixture
def garden(tmp_path: Path) -> None:
    folder = garden_write(tmp_path / "garden", {"Handbook.md": SHARED, f"hr/{HR_FILE}.md": HR_NOTE})
    members_add("hr", [])
    assert not garden_import([folder]).failures


def tools_of(name: str, *audiences: str) -> GardenTools:
    return GardenTools(account_request(member(name, READER, *audiences)[0]))


def hr_named(text: str) -> bool:
    lowered = text.lower()
    return any(name.lower() in lowered for name in (HR_TITLE, HR_WORD, HR_FILE, "pay bands", "zorvath"))


def test_an_agent_outside_hr_reads_the_shared_note_as_its_page_shows_it(garden: None) -> None:
    bob = tools_of("bob")
    for text in (
        bob.read_article(title="Handbook")["text"],
        bob.read_article(address="/articles/handbook/")["text"],
        bob.article_text("handbook"),
    ):
        assert "announces its decisions" in text
        assert text.count(NOTE_NOT_SHARED_LINK) == 3  # the embed, the wikilink and the Markdown link
        assert not hr_named(text), text
    with pytest.raises(ToolError):
        bob.read_article(title=HR_TITLE)
    with pytest.raises(ResourceNotFoundError):
        bob.article_text("hr-zorvath-pay")


def test_an_agent_in_hr_reads_the_note_as_written(garden: None) -> None:
    alice = tools_of("alice", "hr")
    for text in (alice.read_article(title="Handbook")["text"], alice.article_text("handbook")):
        assert text.endswith(SHARED.split("\n\n", 1)[1]) and NOTE_NOT_SHARED_LINK not in text
    assert HR_WORD in alice.read_article(title=HR_TITLE)["text"]
    assert HR_WORD in alice.article_text("hr-zorvath-pay")  # the address bob is told nothing of
