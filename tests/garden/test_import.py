"""Importing a folder of Markdown: revisions, idempotence, bad files reported while the rest import."""

import pytest
from django.core.management import CommandError, call_command
from django.db import DataError

from garden.models import Article, ArticleRevision, Link, Passage, Theme, Topic
from garden.sync.writing import notes_write
from tests.factories import garden_write

pytestmark = pytest.mark.django_db

GOOD = """---
title: "Quarry siding"
topics: [quarry-siding, sidings]
themes: [permanent-way]
date: 2025-02-01
---
## The siding

The quarry siding at km 9.4 was laid in 1912 and is 210 m long. It joins [[test-signal-box|the signal box]].

It was relaid by volunteers in 2019.
"""
SECOND = """---
title: "Test signal box"
topics: [sidings]
---
The test signal box has 18 levers and controls the [[quarry-siding]].
"""
VOCABULARY = """topics:
  quarry-siding: {title: "Quarry siding", aliases: ["quarry spur"]}
themes:
  permanent-way: {title: "Permanent way", keywords: ["sleepers", "ballast"]}
"""


def test_import_creates_articles_passages_links_topics_and_themes(tmp_path, capsys):
    folder = garden_write(
        tmp_path / "g", {"quarry-siding.md": GOOD, "test-signal-box.md": SECOND, "_garden.yaml": VOCABULARY}
    )
    call_command("import_garden", str(folder), "--no-progress")

    article = Article.objects.get(slug="quarry-siding")
    revision = article.current_revision
    assert revision is not None and str(revision.date) == "2025-02-01"
    for passage in Passage.objects.filter(revision=revision):
        assert revision.body[passage.start : passage.end] == passage.text
        assert len(passage.embedding) == 384
    assert Topic.objects.get(slug="quarry-siding").aliases == ["quarry spur"]
    assert Theme.objects.get(slug="permanent-way").keywords == ["sleepers", "ballast"]
    assert set(article.topics.values_list("slug", flat=True)) == {"quarry-siding", "sidings"}
    link = Link.objects.get(source=article, target_slug="test-signal-box")
    assert link.target == Article.objects.get(slug="test-signal-box")
    assert Link.objects.get(source__slug="test-signal-box").target == article
    assert "passages/s" in capsys.readouterr().out


def test_reimport_is_idempotent_and_a_changed_file_makes_a_new_revision(tmp_path, capsys):
    folder = garden_write(tmp_path / "g", {"quarry-siding.md": GOOD})
    call_command("import_garden", str(folder), "--no-progress")
    call_command("import_garden", str(folder), "--no-progress")
    assert ArticleRevision.objects.filter(article__slug="quarry-siding").count() == 1
    assert "1 unchanged" in capsys.readouterr().out

    garden_write(folder, {"quarry-siding.md": GOOD.replace("210 m long", "240 m long")})
    call_command("import_garden", str(folder), "--no-progress")
    revisions = ArticleRevision.objects.filter(article__slug="quarry-siding").order_by("created_at")
    assert [r.superseded for r in revisions] == [True, False]
    assert "210 m" in revisions[0].body and "240 m" in revisions[1].body
    old_passages = Passage.objects.filter(revision=revisions[0])
    assert old_passages.exists() and not old_passages.filter(is_current=True).exists()


def test_bad_files_are_reported_by_name_and_reason_while_the_rest_import(tmp_path, capsys):
    folder = garden_write(
        tmp_path / "g",
        {
            "quarry-siding.md": GOOD,
            "broken-yaml.md": "---\ntitle: [unclosed\n---\nBody text.\n",
            "latin1.md": "---\ntitle: Café\n---\nCaf\xe9 au lait.\n".encode("latin-1"),
            "empty-body.md": "---\ntitle: Nothing here\n---\n\n",
            "bad-date.md": "---\ndate: last spring\n---\nSome text.\n",
            "no-title.md": "---\ntopics: [x]\n---\nSome text.\n",
        },
    )
    with pytest.raises(CommandError, match="4 file"):
        call_command("import_garden", str(folder), "--no-progress")
    errors = capsys.readouterr().err
    assert "broken-yaml.md: front matter is not valid YAML" in errors
    assert "latin1.md: not valid UTF-8" in errors
    assert "empty-body.md: the article has no body" in errors
    assert "bad-date.md: front matter field 'date' is not an ISO date" in errors
    assert Article.objects.filter(slug="quarry-siding").exists()
    assert not Article.objects.filter(slug__in=["broken-yaml", "latin1", "empty-body", "bad-date"]).exists()
    # A note without a title is no longer an error: it is titled by its file name.
    assert Article.objects.get(slug="no-title").title == "no-title"


def test_a_note_the_database_refuses_is_reported_while_the_notes_written_with_it_are_stored(
    tmp_path, capsys, monkeypatch
):
    # Notes are written a group at a time; a note the database refuses fails the group's transaction, and the
    # notes are then written one by one, so only that note is lost, and named. (No title is refused for its
    # length any more: any length is stored whole, so the database is made to refuse one here.)
    def refusing(group, known):
        if any(item.parsed.title == "Refused by the database" for item in group):
            raise DataError("value refused")
        return notes_write(group, known)

    monkeypatch.setattr("garden.sync.groups.notes_write", refusing)
    long_title = "Goods shed " * 40
    folder = garden_write(
        tmp_path / "g",
        {
            "quarry-siding.md": GOOD,
            "Refused.md": "---\ntitle: Refused by the database\n---\nThe weighbridge hut has a 3 t crane.\n",
            "Long title.md": f"---\ntitle: {long_title}\n---\nThe goods shed has a loading dock.\n",
            "test-signal-box.md": SECOND,
            # Too long to be a topic (a sentence, not a name), yet a title: the note imports.
            "Sentence.md": f"# {'The goods yard was busy ' * 6}\n\nThe yard had two cranes.\n",
        },
    )
    with pytest.raises(CommandError, match="1 file"):
        call_command("import_garden", str(folder), "--no-progress")
    assert "Refused.md: could not be stored: value refused" in capsys.readouterr().err
    stored = Article.objects.filter(
        slug__in=["quarry-siding", "test-signal-box", "sentence", "long-title", "refused"]
    )
    assert sorted(stored.values_list("slug", flat=True)) == [
        "long-title",
        "quarry-siding",
        "sentence",
        "test-signal-box",
    ]
    assert Article.objects.get(slug="long-title").title == long_title.strip()
    link = Link.objects.get(source__slug="quarry-siding")
    assert link.target_id == Article.objects.get(slug="test-signal-box").pk
    assert not Passage.objects.filter(text__contains="weighbridge hut").exists()


def test_a_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="no such file or folder"):
        call_command("import_garden", str(tmp_path / "nowhere"))


def test_sample_garden_keeps_superseded_revisions():
    """The sample garden ships older revisions of some articles; they are kept and marked superseded."""
    superseded = ArticleRevision.objects.filter(superseded=True)
    assert superseded.values("article").distinct().count() >= 3
    for revision in superseded:
        assert revision.article.current_revision is not None


def test_a_topic_named_by_notes_of_several_groups_is_stored_as_if_derived_at_once(tmp_path, monkeypatch):
    """Topics are derived and stored a group of notes at a time: a name that notes of different groups share
    keeps its first note's title and gathers every group's aliases, as one pass over all the notes gave it."""
    from garden.sync import groups

    notes = {
        "Hives/Hive.md": "---\naliases: [beehive]\ntags: [bees/swarming]\n---\n# Hive\n\nA hive of bees.\n",
        "Yards/hive.md": "---\naliases: [colony]\ntags: [bees/swarming]\n---\n# hive\n\nA colony in a yard.\n",
        "Yards/Swarm.md": "---\ntags: [bees/swarming]\n---\n# Swarm\n\nA swarm leaves the hive.\n",
    }

    def vocabulary(group_passages: int) -> list[tuple[str, str, list[str]]]:
        for model in (Article, Topic, Theme):  # each import starts from an empty garden
            model.objects.all().delete()
        monkeypatch.setattr(groups, "GROUP_PASSAGES", group_passages)
        call_command(
            "import_garden", str(garden_write(tmp_path / str(group_passages), notes)), "--no-progress"
        )
        return list(Topic.objects.order_by("slug").values_list("slug", "title", "aliases"))

    one_group, a_group_each = vocabulary(256), vocabulary(1)
    assert a_group_each == one_group
    assert ("hive", "Hive", ["beehive", "colony"]) in a_group_each
    assert ("bees-swarming", "bees/swarming", ["swarming"]) in a_group_each
