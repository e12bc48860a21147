"""The markers people use to keep a note private, in front matter and in Logseq page properties, in any case and
with any yes or no; a value that is neither keeps the note out too; a broken front matter that says private is
a failure that says so; Logseq's own copies of pages are never read."""

import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from garden.formats.markdown import ArticleFileError, parse_article_text
from garden.models import Article, Passage
from tests.factories import garden_write

BODY = "ZEPHYRCODE the gate code is 4471.\n"


def parsed_private(text: str) -> bool:
    return parse_article_text(text, path="Note.md", slug="Note", relative_path="Note").private


@pytest.mark.parametrize(
    "front_matter",
    [
        "private: true",
        "Private: true",
        "PRIVATE: True",
        "private: 1",
        "private: yes",
        "private: Yes",
        "private: on",
        "private: 'true'",
        "draft: true",
        "Draft: ON",
        "publish: false",
        "publish: 0",
        "published: false",
        "Published: No",
        "public: false",
        "public: off",
        "public: 'FALSE'",
    ],
)
def test_front_matter_markers_keep_a_note_out(front_matter: str) -> None:
    assert parsed_private(f"---\ntitle: Gate\n{front_matter}\n---\n{BODY}")


@pytest.mark.parametrize(
    "properties",
    [
        "public:: false",
        "private:: true",
        "Public:: False",
        "title:: Gate\npublic:: no",
        "\npublic:: false",  # blank lines before the page's properties
        "- public:: false",  # typed into the page's first block
        "- title:: Gate\n  private:: true",
    ],
)
def test_logseq_page_properties_keep_a_note_out(properties: str) -> None:
    assert parsed_private(f"{properties}\n\n- {BODY}")


@pytest.mark.parametrize(
    "marker", ["private: later", "private: [a, b]", "private:", "draft: 2025-01-01", "public:: maybe"]
)
def test_a_marker_that_is_neither_yes_nor_no_keeps_the_note_out(marker: str) -> None:
    text = f"{marker}\n\n{BODY}" if "::" in marker else f"---\n{marker}\n---\n{BODY}"
    assert parsed_private(text)


@pytest.mark.parametrize(
    "text",
    [
        f"---\nprivate: false\npublish: true\npublished: yes\ndraft: no\npublic: true\n---\n{BODY}",
        f"public:: true\n\n{BODY}",
        f"---\ntitle: A note about privacy\n---\nWe mark notes private: true in their front matter.\n{BODY}",
        # A Dataview field in the body is no page property.
        f"# Gate\n\n{BODY}\n- private:: true\n",
    ],
)
def test_notes_that_say_public_or_say_nothing_are_public(text: str) -> None:
    assert not parsed_private(text)


def test_a_broken_front_matter_that_says_private_fails_saying_so() -> None:
    with pytest.raises(ArticleFileError) as failed:
        parse_article_text(
            f"---\ntitle: Pay review: 2025\nprivate: true\n---\n{BODY}", path="Pay.md", slug="Pay"
        )
    assert str(failed.value) == (
        "front matter is not valid YAML at line 2, and it marks the note private (private: true); "
        "the note is withheld until the front matter is fixed"
    )
    assert failed.value.marked_private
    with pytest.raises(ArticleFileError) as failed:
        parse_article_text(f"---\ntitle: Pay review: 2025\n---\n{BODY}", path="Pay.md", slug="Pay")
    assert str(failed.value) == "front matter is not valid YAML at line 2" and not failed.value.marked_private


LOGSEQ = Path(__file__).resolve().parent / "gardens" / "logseq"


@pytest.mark.django_db
def test_a_logseq_graph_s_private_pages_and_its_own_copies_never_reach_a_reader(tmp_path, client, capsys):
    graph = tmp_path / "graph"
    shutil.copytree(LOGSEQ, graph)
    garden_write(
        graph,
        {
            "pages/Hive Inspections.md": "title:: Hive Inspections\npublic:: false\n\n- ZEPHYRCODE 201 inspections\n",
            "pages/Committee.md": "- private:: true\n- ZEPHYRCODE 202 the committee\n",
            "pages/Pay review.md": f"---\ntitle: Pay review: 2025\nprivate: true\n---\n- ZEPHYRCODE 203 {BODY}",
            "logseq/bak/pages/Hive Inspections/2026-01-02T10_00_00.md": "- ZEPHYRCODE 204 saved before\n",
            "logseq/version-files/base/pages/Hive Inspections.md": "- ZEPHYRCODE 205 a version\n",
        },
    )
    with pytest.raises(CommandError, match="1 file"):
        call_command("import_garden", str(graph), "--no-progress")
    out, err = capsys.readouterr()
    assert "2 marked private" in out
    assert "Pay review.md: front matter is not valid YAML at line 2, and it marks the note private" in err
    assert Article.objects.filter(path="pages/Bee Forage Plants").exists()
    assert not Passage.objects.filter(text__contains="ZEPHYRCODE").exists()
    assert not Article.objects.filter(path__startswith="logseq/").exists()
    assert "ZEPHYRCODE" not in client.get("/articles/").content.decode()
