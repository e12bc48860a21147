"""Words a note borrows keep their audience (decision 0006): a Logseq page for everyone that references a block
of an `hr` page shows it to readers of hr only; anyone else reads the page's own words, the block as not shared,
and is never answered from it."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from garden.answering.retrieval import retrieve
from garden.audiences import members_add
from garden.models import Answer, Article, Passage
from garden.readers import reader_of
from garden.selectors import ANSWER_NOT_SHARED, BLOCK_NOT_SHARED
from garden.sync import garden_import
from tests.factories import answer_for, garden_write, member
from verifier.roles import EDITOR, READER

pytestmark = pytest.mark.django_db

QUOTED, QUOTING = "6650d3f2-0b8e-4c1a-9e0f-2f1b7a6c9d01", "8872f514-2d0a-4e3c-9021-4b3d9c8e1f23"
PAY = (
    "audience:: hr\n\n"
    f"- Every engineer on band Quillmartin gets a raise of eleven percent.\n  id:: {QUOTED}\n"
    f"- As agreed: (({QUOTED}))\n  id:: {QUOTING}\n"
)
HANDBOOK = (
    "- The cooperative announces its decisions to members at the harvest supper.\n"
    f"- Pay: (({QUOTED}))\n- {{{{embed (({QUOTING}))}}}}\n"
    "- Announcements are pinned on the barn door for a week."
)


def signed_in(name: str, *audiences: str) -> tuple[User, Client]:
    return member(name, READER, *audiences)


@pytest.fixture
def graph(tmp_path: Path) -> None:
    folder = garden_write(
        tmp_path / "graph", {"logseq/config.edn": "{}", "pages/Pay.md": PAY, "pages/Handbook.md": HANDBOOK}
    )
    members_add("hr", [])
    assert not garden_import([folder]).failures


def handbook_passages() -> list[Passage]:
    return list(Passage.objects.filter(article__title="Handbook", is_current=True).order_by("ordinal"))


def test_each_passage_records_whose_words_it_holds_and_none_runs_across_them(graph: None) -> None:
    passages = handbook_passages()
    lent = [p for p in passages if p.shows]
    own = [p for p in passages if not p.shows]
    assert lent and all(p.shows == ["pages/Pay"] and "Quillmartin" in p.text for p in lent)
    assert all("Quillmartin" not in p.text for p in own)
    assert {"harvest supper", "barn door"} <= {
        w for p in own for w in ("harvest supper", "barn door") if w in p.text
    }
    handbook = Article.objects.get(title="Handbook").current_revision
    assert handbook is not None and handbook.shows == ["pages/Pay"]
    assert "\ue000" not in handbook.body and "Quillmartin" in handbook.body  # marks out, words in


def test_a_reader_outside_hr_reads_the_page_with_the_block_not_shared(graph: None) -> None:
    _, bob = signed_in("bob")
    _, alice = signed_in("alice", "hr")
    for client in (bob, Client()):
        page = client.get("/articles/handbook/").content.decode()
        assert "harvest supper" in page and "barn door" in page
        assert "Quillmartin" not in page and "pages/Pay" not in page
        assert page.count(BLOCK_NOT_SHARED) == 2  # the reference, and the embed of the block quoting it
    assert "Quillmartin" in alice.get("/articles/handbook/").content.decode()


def test_retrieval_gives_the_pages_own_words_to_everyone_and_the_block_to_hr_only(graph: None) -> None:
    bob, _ = signed_in("bob")
    alice, _ = signed_in("alice", "hr")
    handbook = Article.objects.get(title="Handbook")
    for_bob = retrieve("When are decisions announced at the harvest supper?", reader=reader_of(bob))
    assert handbook.pk in {hit.article_id for hit in for_bob.sources}
    assert retrieve("Quillmartin?", reader=reader_of(bob)).empty
    for_alice = retrieve("Quillmartin?", reader=reader_of(alice))
    assert handbook.pk in {hit.article_id for hit in for_alice.sources}


def test_an_answer_quoting_the_block_is_not_shared_with_others(graph: None) -> None:
    bob, as_bob = signed_in("bob")
    alice, as_alice = signed_in("alice", "hr")
    lent = next(p for p in handbook_passages() if p.shows)
    answer = answer_for("Every engineer on band Quillmartin gets a raise of eleven percent [1].", lent)
    assert Answer.objects.readable(reader_of(alice)).filter(pk=answer.pk).exists()
    assert not Answer.objects.readable(reader_of(bob)).filter(pk=answer.pk).exists()
    page = as_bob.get(answer.get_absolute_url())
    assert page.status_code == 404 and ANSWER_NOT_SHARED in page.content.decode()
    assert "Quillmartin" not in page.content.decode()
    assert "Quillmartin" in as_alice.get(answer.get_absolute_url()).content.decode()


def test_the_admin_shows_no_editor_a_revision_holding_words_not_theirs(graph: None) -> None:
    handbook = Article.objects.get(title="Handbook").current_revision
    assert handbook is not None
    address = f"/admin/garden/articlerevision/{handbook.pk}/change/"
    (_, outside), (_, inside) = member("bob", EDITOR, staff=True), member("alice", EDITOR, "hr", staff=True)
    assert "0 results" in outside.get("/admin/garden/articlerevision/?q=Quillmartin").content.decode()
    assert "0 results" not in inside.get("/admin/garden/articlerevision/?q=Quillmartin").content.decode()
    assert outside.get(address).status_code == 302  # as a revision that is not there: the raw body holds them
    assert "Quillmartin" in inside.get(address).content.decode()


def test_passages_stored_before_are_hidden_by_the_upgrade_from_anyone_outside_a_lender(graph: None) -> None:
    bob, _ = signed_in("bob")
    Passage.objects.filter(article__title="Handbook").update(shows=[])  # as stored before: no passage knew
    assert not retrieve("Quillmartin?", reader=reader_of(bob)).empty

    upgrade = import_module("garden.migrations.0025_passage_shows").Migration.operations[1]
    with connection.cursor() as cursor:  # (on the table by its name since 0028, garden_passage)
        cursor.execute(upgrade.sql.replace("garden_chunk", Passage._meta.db_table))

    assert retrieve("Quillmartin?", reader=reader_of(bob)).empty
    assert all(p.shows == ["pages/Pay"] for p in handbook_passages())  # all of them: it fails closed


def test_a_question_by_the_pages_topic_alone_is_given_none_of_the_block(tmp_path: Path) -> None:
    """A question that matches only a topic is given that topic's notes' passages: not the borrowed ones."""
    folder = garden_write(
        tmp_path / "graph",
        {
            "logseq/config.edn": "{}",
            "pages/Pay.md": PAY,
            "pages/Handbook.md": f"tags:: Zephyrine\n\n{HANDBOOK}",
        },
    )
    members_add("hr", [])
    assert not garden_import([folder]).failures
    bob, _ = signed_in("bob")
    found = retrieve("Zephyrine?", reader=reader_of(bob))
    shown = Passage.objects.filter(pk__in=[hit.passage_id for hit in found.sources])
    assert shown and not any("Quillmartin" in passage.text for passage in shown)
