"""Two readers of different audiences walk every path that shows garden text over one garden: neither sees a
word, a title, a tag, an alias or a path of the other's notes, and a question only the other's notes could
answer is refused word for word as a question about nothing is."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from claimcheck.terms import ClaimStatus, JudgeMode
from dashboard.mcp_server import GardenTools, user_request
from garden.answering.asking import REFUSAL_TEXT
from garden.answering.retrieval import retrieve
from garden.audiences import members_add
from garden.models import Answer, Article, Image
from garden.readers import ALL_AUDIENCES, reader_of
from garden.selectors import ANSWER_NOT_SHARED, NOTE_NOT_SHARED, NOTE_NOT_SHARED_LINK
from garden.sync import garden_import
from tests.factories import garden_write
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
    user = User.objects.create_user(name, password="x")
    user.groups.add(Group.objects.get(name=EDITOR))
    members_add(audience, [name])
    client = Client()
    client.force_login(user)
    return user, client


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


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    folder = garden_write(
        tmp_path / "garden",
        {
            ".gardenaccess": "hr/: hr\n",
            f"{HR_PATH}.md": HR_NOTE,
            "hr/zorvath-chart.png": PNG,
            f"{BOARD_PATH}.md": BOARD_NOTE,
            "Handbook.md": HANDBOOK,
        },
    )
    for name in ("hr", "board"):
        members_add(name, [])
    report = garden_import([folder])
    assert not report.failures
    return folder


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


def test_two_readers_never_see_each_others_notes(garden: Path) -> None:
    alice, as_alice = editor_in("alice", "hr")
    bob, as_bob = editor_in("bob", "board")
    hr_article = Article.objects.get(slug=HR_SLUG)
    board_article = Article.objects.get(slug=BOARD_SLUG)
    assert hr_article.audiences == ["hr"] and board_article.audiences == ["board"]
    image = Image.objects.get(name="zorvath-chart.png")

    walkers = [
        (alice, as_alice, HR, HR_PATH, HR_SLUG, BOARD, BOARD_PATH, BOARD_SLUG, board_article),
        (bob, as_bob, BOARD, BOARD_PATH, BOARD_SLUG, HR, HR_PATH, HR_SLUG, hr_article),
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

        for path in [
            "/articles/",
            "/articles/handbook/",
            f"/articles/{my_slug}/",
            "/",
            "/review/?reviewed=1",
        ]:
            visit(path)
        handbook = visit("/articles/handbook/")
        assert NOTE_NOT_SHARED in handbook and NOTE_NOT_SHARED_LINK in handbook
        visit(f"/articles/{their_slug}/", 404)
        visit(f"/articles/{their_slug}/?revision={their_article.revisions.get().pk}", 404)
        visit(f"/topics/{theirs['tag']}/", 404)
        if their_slug == HR_SLUG:
            visit(f"/images/{image.sha256}/{image.name}", 404)
        else:
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

        tools = GardenTools(user_request(user))
        searched = tools.search(question_for(theirs["word"]))
        assert not searched["found"]
        seen.append(("mcp search", json.dumps(searched["passages"])))
        with pytest.raises(Exception):  # noqa: B017 - the tool's "not found" error, as for a private note
            tools.read_article(title=theirs["title"])
        with pytest.raises(Exception):  # noqa: B017
            tools.read_article(address=f"/articles/{their_slug}/")

        for path, body in seen:
            assert not leaks(body, theirs, their_path, their_slug), (user.username, path)

    # Each one's answer is the asker's: the other reader is told it is not shared, and nothing more.
    for client, their_slug, theirs, their_path in [
        (as_bob, HR_SLUG, HR, HR_PATH),
        (as_alice, BOARD_SLUG, BOARD, BOARD_PATH),
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


def test_operators_read_every_audience_and_ask_as_names_the_reader(garden: Path, capsys) -> None:
    editor_in("alice", "hr")
    assert {hit.article_id for hit in retrieve(question_for(HR["word"]), reader=ALL_AUDIENCES).sources} & {
        Article.objects.get(slug=HR_SLUG).pk
    }
    call_command("ask", question_for(HR["word"]), "--json")
    anonymous = json.loads(capsys.readouterr().out)
    assert anonymous["refused"] and anonymous["answer"] == REFUSAL_TEXT
    call_command("ask", question_for(HR["word"]), "--json", "--as", "alice")
    as_alice = json.loads(capsys.readouterr().out)
    assert not as_alice["refused"] and HR_SLUG in {c["article"] for c in as_alice["citations"]}
