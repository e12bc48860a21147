"""Two readers of different audiences walk every path that shows garden text over one garden: neither sees a
word, a title, a tag, an alias or a path of the other's notes, and a question only the other's notes could
answer is refused word for word as a question about nothing is. Walked twice: over an Obsidian vault (links,
aliases, tags, an image, a page embedding a page that embeds both) and over a Logseq graph whose shared pages borrow the two
notes' blocks (block references, block embeds, a page embedding a page that references both: decision 0006)."""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from claimcheck.terms import ClaimStatus, JudgeMode
from dashboard.actions.callers import account_request
from dashboard.mcp_server import GardenTools
from garden.answering.asking import REFUSAL_TEXT
from garden.answering.retrieval import retrieve
from garden.audiences import members_add
from garden.models import Answer, Article, Image
from garden.readers import ALL_AUDIENCES, reader_of
from garden.selectors import ANSWER_NOT_SHARED, BLOCK_NOT_SHARED, NOTE_NOT_SHARED, NOTE_NOT_SHARED_LINK
from garden.sync import garden_import
from tests.factories import garden_write, member
from verifier.models import Claim, Verification, VerificationStatus
from verifier.roles import EDITOR

pytestmark = pytest.mark.django_db

# 1x1 transparent PNG: an image only the hr note shows.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

# Everything of one audience's note that the other reader must never come across: a word of its text, its title,
# tag, alias and its path (and so its address).
HR = {
    "word": "Quillmartin",
    "title": "Salary bands Ravelwick",
    "tag": "payroll-zephyr",
    "alias": "Fernwhistle",
    "image": "zorvath-chart",
}
HR_PATH, HR_SLUG = "hr/Zorvath pay", "hr-zorvath-pay"
BOARD = {
    "word": "Brindlecove",
    "title": "Orchard merger Vantablue",
    "tag": "merger-kestrel",
    "alias": "Thornquist",
}
BOARD_PATH, BOARD_SLUG = "Ossery minutes", "ossery-minutes"

HR_NOTE = (
    f"---\ntitle: {HR['title']}\ntags: [{HR['tag']}]\naliases: [{HR['alias']}]\n---\n"
    f"The pay review of 2025 gives every engineer on band {HR['word']} a raise of eleven percent. "
    "The review committee meets in the glasshouse every March to set the bands.\n\n"
    "![[zorvath-chart.png]]\n\nSee the [[Handbook]] for how reviews are announced."
)
BOARD_NOTE = (
    f"---\naudience: board\ntitle: {BOARD['title']}\ntags: [{BOARD['tag']}]\naliases: [{BOARD['alias']}]\n---\n"
    f"The board agreed to merge the orchard with {BOARD['word']} cooperative by the end of the harvest. "
    "The merger vote passed seven to two after a long evening in the barn.\n\n"
    "See the [[Handbook]] for how decisions are announced."
)
HANDBOOK = (
    "# Handbook\n\nThe handbook says how the cooperative announces its decisions to members.\n\n"
    "![[Zorvath pay]]\n\n![[Ossery minutes]]\n\nRead [[Zorvath pay]] and [[Ossery minutes]] too."
)
# A page embedding the handbook: the two notes come two levels down.
WELCOME = "# Welcome\n\nWhat every member reads first.\n\n![[Handbook]]\n"
# The same two notes in a Logseq graph: each has a block others reference, and the shared pages borrow them
# (a page embedding a page that references both: the words come two levels down).
HR_BLOCK, BOARD_BLOCK = "6650d3f2-0b8e-4c1a-9e0f-2f1b7a6c9d01", "7761e403-1c9f-4d2b-8f10-3a2c8b7d0e12"
HR_PAGE = (
    f"audience:: hr\ntitle:: {HR['title']}\ntags:: {HR['tag']}\nalias:: {HR['alias']}\n\n"
    f"- The pay review of 2025 gives every engineer on band {HR['word']} a raise of eleven percent.\n"
    f"  id:: {HR_BLOCK}\n- The review committee meets in the glasshouse every March to set the bands.\n"
    "- See the [[Handbook]] for how reviews are announced."
)
BOARD_PAGE = (
    f"audience:: board\ntitle:: {BOARD['title']}\ntags:: {BOARD['tag']}\nalias:: {BOARD['alias']}\n\n"
    f"- The board agreed to merge the orchard with {BOARD['word']} cooperative by the end of the harvest.\n"
    f"  id:: {BOARD_BLOCK}\n- The merger vote passed seven to two after a long evening in the barn.\n"
    "- See the [[Handbook]] for how decisions are announced."
)
HANDBOOK_PAGE = (
    "- The handbook says how the cooperative announces its decisions to members.\n"
    f"- The pay review: (({HR_BLOCK}))\n- {{{{embed (({BOARD_BLOCK}))}}}}\n- {{{{embed [[Announcements]]}}}}\n"
    f"- Read [[{HR['title']}]], [[{HR['alias']}]], [[{BOARD['title']}]] and [[{BOARD['alias']}]] too."
)
ANNOUNCEMENTS_PAGE = (
    "- Announcements go out on the first Monday of each month.\n"
    f"- The last two said: (({HR_BLOCK})) and (({BOARD_BLOCK}))\n- {{{{embed (({HR_BLOCK}))}}}}"
)
# One word that only one note holds is enough to pass the gate (it covers the whole question); none, and it refuses.
NOTHING = "Plumbrook quenberries?"


def question_for(word: str) -> str:
    return f"{word}?"


def leaks(text: str, secrets: dict[str, str], path: str, slug: str) -> list[str]:
    """What of a note's `secrets`, path and address stands in `text` (case aside)."""
    lowered = text.lower()
    found = [value for value in secrets.values() if value.lower() in lowered]
    return found + [value for value in (path, slug) if value.lower() in lowered]


def editor_in(name: str, audience: str) -> tuple[User, Client]:
    return member(name, EDITOR, audience)


def flagged(answer: Answer) -> None:
    """A finished check of `answer` with a claim the review queue lists, quoting its first source."""
    source = answer.sources.select_related("passage").first()
    assert source is not None
    verification, _ = Verification.objects.update_or_create(
        answer=answer, defaults={"status": VerificationStatus.DONE, "mode": JudgeMode.LOCAL, "judges": 1}
    )
    verification.claims.all().delete()
    Claim.objects.create(
        verification=verification,
        ordinal=1,
        text=answer.text,
        start=0,
        end=len(answer.text),
        status=ClaimStatus.UNVERIFIED,
        quote=source.passage.text[:60],
        source_number=1,
        passage=source.passage,
        confidence=0.4,
    )


@dataclass(frozen=True)
class Walked:
    """A garden for the walk: where its two notes live, and what its shared page shows each reader of them."""

    folder: Path
    hr_path: str
    hr_slug: str
    board_path: str
    board_slug: str
    handbook: str  # the address of the shared page that borrows from both notes
    handbook_shows: tuple[
        str, ...
    ]  # what it reads, for a reader of one, where the other's words or name were
    image: bool  # whether the hr note shows an image of its own


def obsidian(folder: Path) -> Walked:
    garden_write(
        folder,
        {
            ".gardenaccess": "hr/: hr\n",
            f"{HR_PATH}.md": HR_NOTE,
            "hr/zorvath-chart.png": PNG,
            f"{BOARD_PATH}.md": BOARD_NOTE,
            "Handbook.md": HANDBOOK,
            "Welcome.md": WELCOME,
        },
    )
    shows = (NOTE_NOT_SHARED, NOTE_NOT_SHARED_LINK)
    return Walked(folder, HR_PATH, HR_SLUG, BOARD_PATH, BOARD_SLUG, "/articles/handbook/", shows, image=True)


def logseq(folder: Path) -> Walked:
    garden_write(
        folder,
        {
            "logseq/config.edn": "{}",
            "pages/Zorvath pay.md": HR_PAGE,
            "pages/Ossery minutes.md": BOARD_PAGE,
            "pages/Handbook.md": HANDBOOK_PAGE,
            "pages/Announcements.md": ANNOUNCEMENTS_PAGE,
        },
    )
    hr_slug, board_slug = "salary-bands-ravelwick", "orchard-merger-vantablue"
    shows = (BLOCK_NOT_SHARED, NOTE_NOT_SHARED_LINK)
    return Walked(
        folder,
        "pages/Zorvath pay",
        hr_slug,
        "pages/Ossery minutes",
        board_slug,
        "/articles/handbook/",
        shows,
        False,
    )


@pytest.fixture(params=[obsidian, logseq], ids=["obsidian", "logseq"])
def garden(request: pytest.FixtureRequest, tmp_path: Path) -> Walked:
    walked: Walked = request.param(tmp_path / "garden")
    for name in ("hr", "board"):
        members_add(name, [])
    report = garden_import([walked.folder])
    assert not report.failures
    return walked


def the_refusal(payload: dict[str, Any]) -> dict[str, Any]:
    """What a reader reads of an answer, without what tells one asking from another (ids, timings)."""
    keep = [
        "refused",
        "refusal_reason",
        "answer",
        "error",
        "generator",
        "sources",
        "citations",
        "topics",
        "themes",
    ]
    return {key: payload[key] for key in keep}


def test_two_readers_never_see_each_others_notes(garden: Walked) -> None:
    alice, as_alice = editor_in("alice", "hr")
    bob, as_bob = editor_in("bob", "board")
    hr_article = Article.objects.get(slug=garden.hr_slug)
    board_article = Article.objects.get(slug=garden.board_slug)
    assert hr_article.audiences == ["hr"] and board_article.audiences == ["board"]
    image = Image.objects.filter(name="zorvath-chart.png").first()
    assert (image is not None) == garden.image

    walkers = [
        (
            alice,
            as_alice,
            HR,
            garden.hr_path,
            garden.hr_slug,
            BOARD,
            garden.board_path,
            garden.board_slug,
            board_article,
        ),
        (
            bob,
            as_bob,
            BOARD,
            garden.board_path,
            garden.board_slug,
            HR,
            garden.hr_path,
            garden.hr_slug,
            hr_article,
        ),
    ]
    answers: dict[str, str] = {}
    for user, client, mine, _my_path, my_slug, theirs, their_path, their_slug, their_article in walkers:
        seen: list[tuple[str, str]] = []

        def visit(
            path: str,
            expected: int = 200,
            *,
            record: bool = True,
            _client: Client = client,
            _seen: list[tuple[str, str]] = seen,
        ) -> str:
            response = _client.get(path)
            assert response.status_code == expected, path
            body = response.content.decode(errors="replace")
            if record:
                _seen.append((path, body))
            return body

        # What is theirs to read, they read (the walk would pass on an empty garden otherwise).
        own_page = visit(f"/articles/{my_slug}/", record=False)
        assert mine["word"] in own_page and mine["title"] in own_page
        assert mine["title"] in visit("/articles/", record=False)
        assert visit(f"/topics/{mine['tag']}/", record=False)

        shared = [a.get_absolute_url() for a in Article.objects.filter(audiences=[])]
        for path in ["/articles/", *shared, f"/articles/{my_slug}/", "/", "/review/?reviewed=1"]:
            visit(path)
        handbook = visit(garden.handbook)
        assert mine["word"] in handbook  # their own note's words, embedded or lent, they read
        for placeholder in garden.handbook_shows:
            assert placeholder in html.unescape(handbook), placeholder
        visit(f"/articles/{their_slug}/", 404)
        visit(f"/articles/{their_slug}/?revision={their_article.revisions.get().pk}", 404)
        visit(f"/topics/{theirs['tag']}/", 404)
        if image is not None and their_slug == HR_SLUG:
            visit(f"/images/{image.sha256}/{image.name}", 404)
        elif image is not None:
            assert visit(f"/images/{image.sha256}/{image.name}", record=False)

        # Asking: their own question is answered from their own note; the other's is refused as nothing is.
        mine_asked = json.loads(
            client.post(
                "/api/ask", {"question": question_for(mine["word"])}, content_type="application/json"
            ).content
        )
        assert not mine_asked["refused"] and my_slug in {c["article"] for c in mine_asked["citations"]}
        answers[my_slug] = mine_asked["answer_id"]
        flagged(Answer.objects.get(public_id=mine_asked["answer_id"]))
        theirs_asked = client.post(
            "/api/ask", {"question": question_for(theirs["word"])}, content_type="application/json"
        )
        nothing = client.post("/api/ask", {"question": NOTHING}, content_type="application/json")
        refusal = json.loads(theirs_asked.content)
        assert refusal["refused"] and refusal["answer"] == REFUSAL_TEXT
        assert the_refusal(refusal) == the_refusal(json.loads(nothing.content))
        seen.append(("/api/ask", json.dumps(refusal["sources"]) + json.dumps(refusal["topics"])))
        page = client.post("/", {"question": question_for(theirs["word"])}, follow=True)
        assert REFUSAL_TEXT in html.unescape(page.content.decode())
        asked_page = html.unescape(page.content.decode()).replace(question_for(theirs["word"]), "")
        seen.append(("/ (asked)", asked_page))  # the question as they typed it aside

        found = retrieve(question_for(theirs["word"]), reader=reader_of(user))
        assert found.empty and not found.sources
        checked = client.post(
            "/api/check",
            {
                "text": f"The orchard merged with {theirs['word']} and band {theirs['word']} got eleven percent."
            },
            content_type="application/json",
        )
        check = json.loads(checked.content)
        for claim in check["claims"]:
            claim.pop("text")  # the text they gave, not the garden's
        seen.append(("/api/check", json.dumps(check)))

        tools = GardenTools(account_request(user))
        searched = tools.search(question_for(theirs["word"]))
        assert not searched["found"]
        seen.append(("mcp search", json.dumps(searched["passages"])))
        for address in shared:  # what an agent reads of the shared pages is what their page shows
            seen.append((f"mcp read_article {address}", json.dumps(tools.read_article(address=address))))
        with pytest.raises(Exception):  # noqa: B017 - the tool's "not found" error, as for a private note
            tools.read_article(title=theirs["title"])
        with pytest.raises(Exception):  # noqa: B017
            tools.read_article(address=f"/articles/{their_slug}/")

        for path, body in seen:
            assert not leaks(body, theirs, their_path, their_slug), (user.username, path)

    # Each one's answer is the asker's: the other reader is told it is not shared, and nothing more.
    for client, their_slug, theirs, their_path in [
        (as_bob, garden.hr_slug, HR, garden.hr_path),
        (as_alice, garden.board_slug, BOARD, garden.board_path),
    ]:
        public_id = answers[their_slug]
        page = client.get(f"/answers/{public_id}/")
        assert page.status_code == 404 and ANSWER_NOT_SHARED in page.content.decode()
        for path in [f"/api/answers/{public_id}", f"/api/answers/{public_id}/verdict"]:
            response = client.get(path)
            assert response.status_code == 404 and json.loads(response.content) == {
                "error": ANSWER_NOT_SHARED
            }
        review = client.get("/review/?reviewed=1").content.decode()
        assert not leaks(page.content.decode() + review, theirs, their_path, their_slug)
    assert HR["word"] in as_alice.get("/review/?reviewed=1").content.decode()  # the queue lists one's own


def test_operators_read_every_audience_and_ask_as_names_the_reader(garden: Walked, capsys) -> None:
    editor_in("alice", "hr")
    assert {hit.article_id for hit in retrieve(question_for(HR["word"]), reader=ALL_AUDIENCES).sources} & {
        Article.objects.get(slug=garden.hr_slug).pk
    }
    call_command("ask", question_for(HR["word"]), "--json")
    anonymous = json.loads(capsys.readouterr().out)
    assert anonymous["refused"] and anonymous["answer"] == REFUSAL_TEXT
    call_command("ask", question_for(HR["word"]), "--json", "--as", "alice")
    as_alice = json.loads(capsys.readouterr().out)
    assert not as_alice["refused"] and garden.hr_slug in {c["article"] for c in as_alice["citations"]}
