"""Org-mode files are notes too (a format that is one folder, `garden/formats/org/`): an org-roam garden imports
with its titles, tags, aliases and dates, its `[[id:...]]` and `[[file:...]]` links resolve, its headings, code,
quotes and marks read as the garden's, a question is answered from it, and what Org keeps out of an export (a
`:noexport:` or `:private:` subtree, a commented heading, a private file) reaches no reader."""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from garden.answering.asking import question_ask
from garden.formats import registry
from garden.formats.markdown import NOT_UTF8
from garden.formats.org import reading as org
from garden.formats.org.reading import ORG_NOT_TEXT, parse_org_text
from garden.models import Article, ArticleRevision, Link, Passage
from garden.sync import garden_import
from tests.factories import garden_write

pytestmark = pytest.mark.django_db

ORG_ROAM = Path(__file__).resolve().parent / "gardens" / "org-roam"
SECRET = "ZEPHYRORG"  # a word only the private files and subtrees hold


@pytest.fixture
def garden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """The org-roam test garden, imported through the command (which raises on any failure)."""
    folder = tmp_path / "org-roam"
    shutil.copytree(ORG_ROAM, folder)
    call_command("import_garden", str(folder), "--no-progress")
    return folder, capsys.readouterr().out


def article(path: str) -> Article:
    return Article.objects.get(path=path)


def body_of(path: str) -> str:
    revision = article(path).current_revision
    assert revision is not None
    return revision.body


def parsed(text: str, place: str = "note") -> str:
    return parse_org_text(text, path=f"/garden/{place}.org", place=place).body


def test_an_org_roam_garden_imports_with_its_titles_tags_aliases_and_dates(garden):
    _, out = garden
    assert "Skipped 2: 2 marked private." in out
    care = article("hive-care")
    assert (care.title, care.slug) == ("Hive care", "hive-care")
    assert care.tags == ["bees", "apiary", "feeding"]
    assert care.aliases == ["Looking after hives", "apiary"]
    assert care.current_revision is not None and care.current_revision.date == datetime.date(2025, 2, 14)
    journal = article("daily/2025-04-12")
    assert journal.current_revision is not None and journal.current_revision.date == datetime.date(
        2025, 4, 12
    )
    assert article("queens").title == "Queens"
    assert article("Reading list").title == "Reading list"  # the Markdown note beside them


def test_org_markup_reads_as_the_gardens_headings_code_quotes_and_marks(garden):
    body = body_of("hive-care")
    assert "## Winter feeding" in body  # one level below the #+TITLE, as Org's export has it
    assert "and **never** in the rain" in body
    assert "two kilograms of *fondant*" in body and "as `feed-2kg` in the log" in body
    assert '```python\n* a starred line in code stays code\nweights = {"fondant_kg": 2}\n```' in body
    assert "> Feed the bees before they need it." in body
    assert "- **term**: what the log calls it" in body
    for org_only in ("#+TITLE", "#+BEGIN_SRC", ":PROPERTIES:", ":ID:", "#+FILETAGS", ":feeding:"):
        assert org_only not in body
    assert "this year's colour is `blue`" in body_of("queens")
    # The code stays one passage's code: no passage starts inside the block as if it were prose.
    assert Passage.objects.filter(
        article=article("hive-care"), is_current=True, text__contains="fondant"
    ).exists()


def test_id_file_and_name_links_resolve_to_their_notes(garden):
    care, queens = article("hive-care"), article("queens")
    to_queens = Link.objects.get(
        source=care, target=queens
    )  # by the file's id and by the heading's id: one link
    assert "queens" in to_queens.written
    assert Link.objects.filter(source=care, target=article("daily/2025-04-12")).exists()  # [[file:daily/...]]
    assert Link.objects.filter(source=article("daily/2025-04-12"), target=queens).exists()
    reading = article("Reading list")  # a Markdown note: by title, by alias, by file name
    assert set(Link.objects.filter(source=reading).values_list("target__path", flat=True)) == {
        "hive-care",
        "queens",
    }
    assert not Link.objects.filter(source=reading, target__isnull=True).exists()
    assert not Link.objects.filter(source=care, target__isnull=True).exists()  # no red links


def test_what_org_keeps_out_of_an_export_reaches_no_reader(garden, client):
    assert not Passage.objects.filter(text__contains=SECRET).exists()
    assert not ArticleRevision.objects.filter(body__contains=SECRET).exists()
    assert not Article.objects.filter(path__in=["salaries", "swarm-plan"], withheld_at__isnull=True).exists()
    assert "Hive records" not in body_of("hive-care") and "Ideas for next year" not in body_of("hive-care")
    page = client.get(article("hive-care").get_absolute_url()).content.decode()
    assert page.count("Winter feeding") >= 1 and SECRET not in page and "Hive records" not in page


def test_a_question_is_answered_from_an_org_note(garden, settings):
    settings.ANTHROPIC_API_KEY = ""  # the local synthesiser: no model call
    answer = question_ask(text="In hive care, how much fondant does each colony get in November?")
    assert not answer.refused
    assert "two kilograms" in answer.text
    assert {source.passage.article.path for source in answer.sources.all()} >= {"hive-care"}


def test_an_unchanged_org_garden_is_unchanged_and_its_hash_is_its_org_texts(garden, capsys):
    folder, _ = garden
    hashes = dict(
        ArticleRevision.objects.filter(superseded=False).values_list("article__path", "content_hash")
    )
    data = (folder / "hive-care.org").read_bytes()
    assert (
        hashes["hive-care"]
        == registry.file_hash(Path("hive-care.org"), data)
        == org.FORMAT.content_hash(data)
    )

    call_command("import_garden", str(folder), "--no-progress")

    assert "4 unchanged" in capsys.readouterr().out
    assert (
        dict(ArticleRevision.objects.filter(superseded=False).values_list("article__path", "content_hash"))
        == hashes
    )


def test_an_org_file_that_cannot_be_read_fails_with_its_reason_and_its_note_is_withheld(garden):
    folder, _ = garden
    garden_write(folder, {"queens.org": (folder / "queens.org").read_bytes() + b"\xff not UTF-8"})
    report = garden_import([folder])
    assert [(Path(path).name, reason) for path, reason in report.failures] == [
        ("queens.org", NOT_UTF8.format(start=len((ORG_ROAM / "queens.org").read_bytes())))
    ]
    assert article("queens").withheld


def test_a_binary_file_named_org_is_refused():
    with pytest.raises(Exception, match="NUL bytes"):
        parse_org_text("#+TITLE: x\n\x00", path="/g/x.org", place="x")
    assert "NUL" in ORG_NOT_TEXT


@pytest.mark.parametrize(
    "marker",
    [
        "#+FILETAGS: :private:",
        "#+FILETAGS: :bees:noexport:",
        "#+PRIVATE: t",
        "#+DRAFT: true",
        "#+HUGO_DRAFT: true",
        "#+PUBLISH: nil",
        "#+published: no",
        "#+PRIVATE: later",  # neither yes nor no: its writer meant something
        ":PROPERTIES:\n:PUBLIC: nil\n:END:",
        ":PROPERTIES:\n:ID: 1\n:PRIVATE: t\n:END:",
    ],
)
def test_org_markers_keep_a_note_out(marker: str) -> None:
    note = parse_org_text(
        f"{marker}\n#+TITLE: Gate\n{SECRET} the gate code is 4471.\n", path="/g/x.org", place="x"
    )
    assert note.private and SECRET not in note.body


@pytest.mark.parametrize(
    "heading",
    [
        "* Codes :noexport:",
        "* Codes :work:private:",
        "* COMMENT Codes",
        "* Codes\n:PROPERTIES:\n:DRAFT: t\n:END:",
    ],
)
def test_org_markers_keep_a_subtree_out_and_only_that_subtree(heading: str) -> None:
    body = parsed(
        f"#+TITLE: Gate\nThe gate is blue.\n{heading}\n{SECRET} 4471.\n** Below\n{SECRET} more.\n* Open\nShown."
    )
    assert SECRET not in body and "Codes" not in body and "Below" not in body
    assert "The gate is blue." in body and "## Open\n\nShown." in body


def test_a_files_private_marker_counts_even_inside_a_subtree_left_out() -> None:
    text = f"#+TITLE: Gate\nThe gate is blue.\n* Codes :noexport:\n#+FILETAGS: :private:\n{SECRET} 4471.\n"
    assert parse_org_text(text, path="/g/x.org", place="x").private
    shown = parse_org_text(
        "The gate.\n* Codes :noexport:\n#+TITLE: Secret title\n", path="/g/x.org", place="x"
    )
    assert not shown.private and shown.title == "x"  # and a keyword there is never shown


def test_a_note_with_no_title_is_titled_by_its_first_heading_then_its_file_name() -> None:
    heading = parse_org_text("* Frames and foundations\nWired frames.", path="/g/frames.org", place="frames")
    assert heading.title == "Frames and foundations" and heading.body.startswith("# Frames and foundations")
    plain = parse_org_text("Wired frames only.", path="/g/Bees/frames.org", place="Bees/frames")
    assert (plain.title, plain.slug) == ("frames", "bees-frames")


def test_links_are_written_as_the_gardens_links() -> None:
    body = parsed(
        "See [[file:../Bees/queens.org][the queens]], [[file:other.org::*Marking]], [[Plain name]], "
        "[[https://example.org/a/b][a site]], [[file:plan.png]] and [[id:unknown][words kept]].",
        place="Notes/today",
    )
    assert "[[Bees/queens|the queens]]" in body
    assert "[[Notes/other#Marking]]" in body
    assert "[[Plain name]]" in body
    assert "[a site](https://example.org/a/b)" in body  # a path in a link is no italic
    assert "![](plan.png)" in body
    assert "words kept" in body and "unknown" not in body


def test_lists_tables_and_fixed_width_lines_keep_their_shape() -> None:
    body = parsed("+ one\n  1) two\n| a | b |\n|---+---|\n| 1 | 2 |\n: fixed width\n: lines\nafter")
    assert "- one\n  1. two" in body
    assert "| a | b |\n|---|---|\n| 1 | 2 |" in body
    assert "```\nfixed width\nlines\n```\nafter" in body


def test_org_files_are_what_a_gardens_walk_and_watch_read() -> None:
    assert registry.is_note("Notes/today.ORG")
    assert registry.place_of(Path("Notes/today.org")) == "Notes/today"
    assert ".org" in registry.GARDEN_SUFFIXES


@pytest.mark.parametrize(
    ("written", "audiences"),
    [
        ("#+AUDIENCE: hr\n", ("hr",)),
        ("#+AUDIENCES: hr, board\n", ("board", "hr")),
        (":PROPERTIES:\n:AUDIENCE: board\n:END:\n", ("board",)),
        ("", None),
    ],
)
def test_an_org_note_names_its_audiences_as_a_markdown_note_does(written: str, audiences: object) -> None:
    note = parse_org_text(f"{written}#+TITLE: Pay scales\n\nThe pay bands.\n", path="/g/pay.org", place="pay")
    assert note.audiences == audiences and not note.private
