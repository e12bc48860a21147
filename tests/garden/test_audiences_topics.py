"""A topic that a note for everyone and a note for `hr` both name: a reader outside `hr` sees, and asks by, only the
names the shared note gives it; a follow-up about a word only the hr note holds is refused as one about nothing;
a shared passage linking to the hr note never shows that note's name, in an answer, its sources, its check's
quotes or a search."""

from __future__ import annotations

import html
import json
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client

from claimcheck.terms import ClaimStatus, JudgeMode
from dashboard.actions.callers import account_request
from dashboard.mcp_server import GardenTools
from garden.answering.asking import REFUSAL_TEXT
from garden.answering.phrases import phrase_keys
from garden.answering.retrieval import retrieve
from garden.audiences import members_add
from garden.models import Answer, Name, Topic
from garden.readers import reader_of
from garden.selectors import NOTE_NOT_SHARED_LINK, texts_shown
from garden.sync import garden_import, groups
from garden.sync.topic_names import topics_rederive
from tests.factories import garden_write, member
from verifier.models import Claim, Verification, VerificationStatus, Vote
from verifier.roles import EDITOR

pytestmark = pytest.mark.django_db

# The hr note names the shared note's topic by its title, and gives it an alias and a file name of its own.
HR_ALIAS, HR_FILE = "Fernwhistle", "Zorvath pay"
HR_LINKED = HR_FILE.replace(" ", "%20")  # as a Markdown link writes it
PUBLIC_NOTE = (
    "# Pay scales\n\nThe pay scales of the cooperative are published to every member each spring, with the "
    f"bands for every role.\n\nThe details are in [[{HR_FILE}]] and ![[{HR_FILE}]] for those who may read them, "
    f"and [on its page](hr/{HR_LINKED}.md)."
)
HR_NOTE = (
    f"---\ntitle: Pay scales\naliases: [{HR_ALIAS}]\n---\n"
    "The pay scales for the office put every engineer on a band reviewed in the greenhouse each March."
)
TOPIC = "pay-scales"
FIRST = "When are the pay scales published?"
# An everyday word only the hr note holds, and one no note holds: a follow-up about either reads the same.
HR_ONLY_WORD, NOWHERE_WORD = "greenhouse", "submarine"
NOTHING = "Plumbrook quenberries?"


def reader_in(name: str, audience: str) -> tuple[User, Client]:
    return member(name, EDITOR, audience)


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    folder = garden_write(
        tmp_path / "garden",
        {".gardenaccess": "hr/: hr\n", "Pay scales.md": PUBLIC_NOTE, f"hr/{HR_FILE}.md": HR_NOTE},
    )
    for name in ("hr", "board"):
        members_add(name, [])
    report = garden_import([folder])
    assert not report.failures
    # The topic is the same for both notes, and holds the names both give it.
    topic = Topic.objects.get(slug=TOPIC)
    assert HR_ALIAS in topic.aliases
    return folder


def asked(client: Client, question: str, conversation: str | None = None) -> dict[str, Any]:
    payload = {"question": question, **({"conversation": conversation} if conversation else {})}
    response = client.post("/api/ask", payload, content_type="application/json")
    assert response.status_code == 200, response.content
    return json.loads(response.content)


def as_read(payload: dict[str, Any]) -> dict[str, Any]:
    keep = ["refused", "refusal_reason", "answer", "error", "generator", "sources", "citations", "topics"]
    return {key: payload[key] for key in keep}


def checked_quoting_the_link(answer_id: str) -> str:
    """A finished check of the answer whose one claim, and its one vote, quote its source's link to the hr
    note; returns the quote as stored."""
    answer = Answer.objects.get(public_id=answer_id)
    source = answer.sources.select_related("passage").get()
    quote = source.passage.text[source.passage.text.index("The details") :]
    verification, _ = Verification.objects.update_or_create(
        answer=answer, defaults={"status": VerificationStatus.DONE, "mode": JudgeMode.LOCAL, "judges": 1}
    )
    verification.claims.all().delete()
    claim = Claim.objects.create(
        verification=verification,
        ordinal=1,
        text=answer.text,
        start=0,
        end=len(answer.text),
        status=ClaimStatus.VERIFIED,
        quote=quote,
        source_number=1,
        passage=source.passage,
        confidence=0.9,
    )
    Vote.objects.create(claim=claim, judge="local", status=ClaimStatus.VERIFIED, confidence=0.9, quote=quote)
    return quote


def test_a_topic_shows_only_the_names_its_readers_notes_give_it(garden: Path) -> None:
    _, as_bob = reader_in("bob", "board")
    _, as_alice = reader_in("alice", "hr")

    bobs = html.unescape(as_bob.get(f"/topics/{TOPIC}/").content.decode())
    assert "Pay scales" in bobs
    assert HR_ALIAS not in bobs and HR_FILE not in bobs
    shared = html.unescape(as_bob.get("/articles/pay-scales/").content.decode())
    assert HR_ALIAS not in shared
    alices = html.unescape(as_alice.get(f"/topics/{TOPIC}/").content.decode())
    assert HR_ALIAS in alices and HR_FILE in alices


def test_the_admin_names_a_shared_topic_to_each_editor_as_their_pages_do(garden: Path) -> None:
    topic = Topic.objects.get(slug=TOPIC)
    address = f"/admin/garden/topic/{topic.pk}/change/"
    bob, as_bob = reader_in("bob", "board")
    alice, as_alice = reader_in("alice", "hr")
    User.objects.filter(pk__in=[bob.pk, alice.pk]).update(is_staff=True)

    listed = html.unescape(as_bob.get("/admin/garden/topic/").content.decode())
    opened = html.unescape(as_bob.get(address).content.decode())
    assert "pay scales" in listed.lower() and "pay scales" in opened.lower()
    assert HR_ALIAS not in listed and HR_ALIAS not in opened
    assert "0 results" in as_bob.get(f"/admin/garden/topic/?q={HR_ALIAS}").content.decode()
    # Its names are not theirs to edit: a save leaves the alias the hr note gives it.
    as_bob.post(address, {"slug": TOPIC, "aliases": ""})
    assert HR_ALIAS in Topic.objects.get(pk=topic.pk).aliases

    assert HR_ALIAS in html.unescape(as_alice.get(address).content.decode())  # every name theirs: editable
    assert 'name="aliases"' in as_alice.get(address).content.decode()


def test_a_question_by_a_name_only_anothers_note_gives_is_refused_as_nothing_is(garden: Path) -> None:
    bob, as_bob = reader_in("bob", "board")
    alice, as_alice = reader_in("alice", "hr")

    Topic.objects.get(slug=TOPIC).save()  # an edit in the admin keeps whose names they are
    by_alias = asked(as_bob, f"{HR_ALIAS}?")
    assert by_alias["refused"] and by_alias["answer"] == REFUSAL_TEXT
    assert as_read(by_alias) == as_read(asked(as_bob, NOTHING))
    assert retrieve(f"{HR_ALIAS}?", reader=reader_of(bob)).empty
    # The one who may read the hr note finds the topic by its alias.
    assert not retrieve(f"{HR_ALIAS}?", reader=reader_of(alice)).empty
    assert TOPIC in asked(as_alice, f"{HR_ALIAS}?")["topics"]


def test_a_follow_up_about_a_word_only_anothers_note_holds_reads_as_one_about_nothing(garden: Path) -> None:
    _, as_bob = reader_in("bob", "board")

    answers = []
    for word in (HR_ONLY_WORD, NOWHERE_WORD):
        first = asked(as_bob, FIRST)
        assert not first["refused"]
        answers.append(asked(as_bob, f"And the {word}?", first["conversation"]))
    hr_only, nowhere = answers
    assert nowhere["refused"] and nowhere["answer"] == REFUSAL_TEXT
    assert as_read(hr_only) == as_read(nowhere)
    assert hr_only["searched_for"] == nowhere["searched_for"] is None  # each on its own words


def test_a_shared_passage_linking_to_anothers_note_shows_it_as_not_shared(garden: Path) -> None:
    bob, as_bob = reader_in("bob", "board")
    alice, as_alice = reader_in("alice", "hr")

    bobs = asked(as_bob, FIRST)
    passages = [citation["passage"] for citation in bobs["citations"]]
    assert passages and any(NOTE_NOT_SHARED_LINK in passage for passage in passages)
    assert not any(HR_FILE in passage or HR_LINKED in passage for passage in passages)
    page = html.unescape(as_bob.get(f"/answers/{bobs['answer_id']}/").content.decode())
    assert HR_FILE not in page.replace(FIRST, "")
    quoted = checked_quoting_the_link(bobs["answer_id"])
    verdict = json.loads(as_bob.get(f"/api/answers/{bobs['answer_id']}/verdict").content)
    quotes = [verdict["claims"][0]["quote"], verdict["claims"][0]["votes"][0]["quote"]]
    assert all(NOTE_NOT_SHARED_LINK in quote and HR_FILE not in quote for quote in quotes)
    assert HR_FILE in quoted  # stored as written
    claimed = f"The pay scales are published each spring. The details are in {HR_FILE}."
    for checked in (
        json.loads(as_bob.post("/api/check", {"text": claimed}, content_type="application/json").content),
        GardenTools(account_request(bob)).check(claimed),
    ):
        assert checked["claims"] and checked["sources"]
        assert not any(HR_FILE in claim["quote"] for claim in checked["claims"])
    searched = GardenTools(account_request(bob)).search(FIRST)
    texts = [passage["text"] for passage in searched["passages"]]
    assert texts and not any(HR_FILE in text or HR_LINKED in text for text in texts)
    assert any(NOTE_NOT_SHARED_LINK in text for text in texts)

    # The one who may read it sees the passage as written.
    alices = asked(as_alice, FIRST)
    assert any(f"[[{HR_FILE}]]" in citation["passage"] for citation in alices["citations"])
    assert any(
        f"[[{HR_FILE}]]" in p["text"] for p in GardenTools(account_request(alice)).search(FIRST)["passages"]
    )


@pytest.mark.parametrize(
    "cut",
    [
        lambda text: text[: text.index("[[Zorvath") + len("[[Zorv")],  # `… The details are in [[Zorv`
        lambda text: text[text.index("Zorvath pay]]") + len("Zo") :],  # `rvath pay]] and ![[…`
        lambda text: text[: text.index("hr/Zorvath") + len("hr/Zorvath%2")],  # `… [on its page](hr/Zorvath%2`
        lambda text: text[text.index("Zorvath%20pay.md)") + len("Zor") :],  # `vath%20pay.md).`
    ],
    ids=[
        "wikilink at the end",
        "wikilink at the start",
        "Markdown link at the end",
        "Markdown link at the start",
    ],
)
def test_a_quote_cut_inside_a_link_to_anothers_note_hides_it_too(garden: Path, cut) -> None:
    _, as_bob = reader_in("bob", "board")
    _, as_alice = reader_in("alice", "hr")
    bobs = asked(as_bob, FIRST)
    text = Answer.objects.get(public_id=bobs["answer_id"]).sources.get().passage.text
    checked_quoting_the_link(bobs["answer_id"])
    quoted = cut(text)
    Claim.objects.filter(verification__answer__public_id=bobs["answer_id"]).update(quote=quoted)
    Vote.objects.filter(claim__verification__answer__public_id=bobs["answer_id"]).update(quote=quoted)

    claim = json.loads(as_bob.get(f"/api/answers/{bobs['answer_id']}/verdict").content)["claims"][0]
    for quote in (claim["quote"], claim["votes"][0]["quote"]):
        assert NOTE_NOT_SHARED_LINK in quote
        assert not any(part in quote for part in ("Zorv", "rvath", "vath%20pay", "hr/Zo")), quote
    page = html.unescape(as_bob.get(f"/answers/{bobs['answer_id']}/").content.decode())
    assert "Zorv" not in page and "rvath pay" not in page and "vath%20pay" not in page
    # The one who may read the hr note reads the quote as written.
    alices = json.loads(as_alice.get(f"/api/answers/{bobs['answer_id']}/verdict").content)
    assert alices["claims"][0]["quote"] == quoted


def test_a_link_cut_at_a_quotes_edge_to_a_note_one_may_read_stays_as_written() -> None:
    hidden = {1: {"zorvath pay", "hr/zorvath pay"}}
    texts = [
        (1, "Read the [[Handbo"),
        (1, "Read [the page](Handbook.m"),
        (1, "book.md) for how reviews are announced."),
        (1, "and [[Handbook#Reviews]] is read as written"),
    ]
    assert texts_shown(texts, reader_of(None), hidden) == [text for _, text in texts]
    cut = texts_shown(
        [(1, "See [[Zorvath pay|the"), (1, "Reviews]] come in March.")], reader_of(None), hidden
    )
    assert cut == [f"See {NOTE_NOT_SHARED_LINK}", f"{NOTE_NOT_SHARED_LINK} come in March."]


def test_a_topic_read_during_the_import_shows_only_the_names_its_readers_notes_give_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob, as_bob = reader_in("bob", "board")
    alice, _ = reader_in("alice", "hr")
    folder = garden_write(
        tmp_path / "garden",
        {".gardenaccess": "hr/: hr\n", "Pay scales.md": PUBLIC_NOTE, f"hr/{HR_FILE}.md": HR_NOTE},
    )
    seen: dict[str, Any] = {}

    def read_then_rederive(*args: Any) -> int:
        """Every group is stored, and the topics not yet re-derived from their notes: read them as bob and alice."""
        seen["topic"] = Topic.objects.read_by(reader_of(bob)).get(slug=TOPIC)
        seen["page"] = html.unescape(as_bob.get(f"/topics/{TOPIC}/").content.decode())
        seen["bob asks"] = retrieve(f"{HR_ALIAS}?", reader=reader_of(bob))
        seen["alice asks"] = retrieve(f"{HR_ALIAS}?", reader=reader_of(alice))
        return topics_rederive(*args)

    monkeypatch.setattr(groups, "topics_rederive", read_then_rederive)
    assert not garden_import([folder]).failures

    assert HR_ALIAS in Topic.objects.get(slug=TOPIC).aliases  # the topic holds the names both notes give it
    assert HR_ALIAS not in seen["topic"].reader_aliases and "Pay scales" in seen["page"]
    assert HR_ALIAS not in seen["page"] and HR_FILE not in seen["page"]
    assert seen["bob asks"].empty and not seen["alice asks"].empty


def test_names_stored_before_are_stored_per_note_by_the_upgrade(garden: Path) -> None:
    bob, _ = reader_in("bob", "board")
    topic = Topic.objects.get(slug=TOPIC)
    Name.objects.filter(topic=topic).delete()  # as stored before: the topic's names, for everyone
    Name.objects.bulk_create(Name(phrase=phrase, topic=topic) for phrase in phrase_keys(topic.names))
    assert not retrieve(f"{HR_ALIAS}?", reader=reader_of(bob)).empty

    import_module("garden.migrations.0021_name_article").names_by_article(apps, None)

    assert retrieve(f"{HR_ALIAS}?", reader=reader_of(bob)).empty
    assert not retrieve("Pay scales?", reader=reader_of(bob)).empty
