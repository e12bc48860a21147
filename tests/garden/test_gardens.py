"""Gardens as people keep them: notes without front matter, folders, aliases and tags, links written every way
an editor writes them, red links, and notes that must stay private."""

import datetime
import os
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from garden.models import Article, Link, Passage
from garden.readers import ANONYMOUS
from garden.selectors import article_backlinks
from tests.factories import garden_write

pytestmark = pytest.mark.django_db

VAULT = {
    "Varroa treatment.md": """---
aliases: [Mite plan, mites]
tags: [bees, health]
created: 2024-03-01T09:30
---
# Treating hives for varroa

The cooperative treats every hive with oxalic acid in the first week of December. #bees/health

See [[Hive calendar]] and [[hive CALENDAR|the calendar]] again, and [[Swarm rules#^swarm-rule]].
""",
    "Bees/Hive calendar.md": """The hive calendar starts with the spring inspection on 15 March.
Treatment is in December: [[Mite plan]], and [[Varroa treatment#Dosage|the dosage]].
""",
    "Bees/Swarm rules.md": """---
title: Swarm rules
updated: 2025-06-02
---
A swarm is collected within two hours of the first call. ^swarm-rule

[[Pruning calendar]] is not written yet.
""",
    "Sync/Security and privacy.md": "# Security of the shared drive\n\nThe shared drive syncs every 15 minutes.\n",
    "Publish/Security and privacy.md": (
        "The public website shows no member's address. Read the [drive note](../Sync/Security%20and%20privacy.md)."
    ),
    "Orchard/Apples.md": "We grow 14 apple varieties, see [[Orchard/Pears]] and [the pears](Pears.md#grafting).",
    "Orchard/Pears.md": "Nine pear trees grow along the east hedge.",
    "Pears.md": "A root note called Pears that the orchard's folder links must not pick.",
}

PRIVATE = {
    "Unpublished.md": "---\npublish: false\n---\nZEPHYRCODE 101 the gate code is 4471.\n",
    "Draft.md": "---\ndraft: true\n---\nZEPHYRCODE 102 a draft plan.\n",
    "Secret.md": "---\nprivate: yes\n---\nZEPHYRCODE 103 a private note.\n",
    ".obsidian/workspace.md": "ZEPHYRCODE 104 the editor's settings.\n",
    ".trash/Old note.md": "ZEPHYRCODE 105 a deleted note.\n",
    "templates/Daily template.md": "ZEPHYRCODE 106 a template.\n",
    "node_modules/pkg/README.md": "ZEPHYRCODE 107 a package.\n",
    "Drafts/Unfinished plan.md": "ZEPHYRCODE 108 ignored by the folder rule.\n",
    "Membership/Committee pay.secret.md": "ZEPHYRCODE 109 ignored by the pattern.\n",
    ".gardenignore": "# private folders\nDrafts/\n*.secret.md\n",
}


@pytest.fixture
def vault(tmp_path: Path, capsys) -> tuple[Path, str]:
    folder = garden_write(tmp_path / "vault", VAULT)
    call_command("import_garden", str(folder), "--no-progress")
    return folder, capsys.readouterr().out


def article(path: str) -> Article:
    return Article.objects.get(path=path)


def date_of(path: str) -> datetime.date | None:
    revision = article(path).current_revision
    assert revision is not None
    return revision.date


def test_every_note_imports_with_a_title_from_its_front_matter_heading_or_file_name(vault):
    assert article("Varroa treatment").title == "Treating hives for varroa"  # the first '# ' heading
    assert article("Bees/Swarm rules").title == "Swarm rules"  # front matter
    assert article("Bees/Hive calendar").title == "Hive calendar"  # the file name, spaces kept
    assert article("Sync/Security and privacy").title == "Security of the shared drive"
    assert article("Publish/Security and privacy").title == "Security and privacy"


def test_notes_of_one_name_in_two_folders_are_two_articles_and_slugs_stay_put(vault, capsys):
    folder, _ = vault
    slugs = {a.path: a.slug for a in Article.objects.all()}
    assert slugs["Sync/Security and privacy"] == "sync-security-and-privacy"
    assert slugs["Publish/Security and privacy"] == "publish-security-and-privacy"

    call_command("import_garden", str(folder), "--no-progress")

    assert {a.path: a.slug for a in Article.objects.all()} == slugs
    assert f"{len(VAULT)} unchanged" in capsys.readouterr().out


def test_aliases_tags_and_dates_are_kept(vault):
    varroa = article("Varroa treatment")
    assert varroa.aliases == ["Mite plan", "mites"]
    assert varroa.tags == ["bees", "health", "bees/health"]
    assert date_of("Varroa treatment") == datetime.date(2024, 3, 1)  # `created`
    assert date_of("Bees/Swarm rules") == datetime.date(2025, 6, 2)  # `updated`


def test_a_note_without_dates_takes_its_file_modification_date(tmp_path):
    note = garden_write(tmp_path / "g", {"Plain.md": "Just a plain note about hedges."}) / "Plain.md"
    os.utime(note, (0, datetime.datetime(2023, 5, 17, 12, tzinfo=datetime.UTC).timestamp()))
    call_command("import_garden", str(note.parent), "--no-progress")
    assert date_of("Plain") == datetime.date(2023, 5, 17)


def test_links_resolve_as_editors_write_them_and_two_links_to_one_note_are_one_link(vault):
    varroa, calendar = article("Varroa treatment"), article("Bees/Hive calendar")
    # '[[Hive calendar]]' and '[[hive CALENDAR|the calendar]]': one link, by file name, any case.
    [to_calendar] = Link.objects.filter(source=varroa, target=calendar)
    assert to_calendar.text == "Hive calendar"
    assert sorted(to_calendar.written) == ["hive calendar"]
    # A heading or block anchor still names the note; so does an alias.
    assert Link.objects.filter(source=varroa, target=article("Bees/Swarm rules")).exists()
    assert (
        Link.objects.filter(source=calendar, target=varroa).count() == 1
    )  # '[[Mite plan]]' and '[[Varroa...]]'
    # A relative Markdown link with %20, and a folder-qualified wikilink beside a root note of the same name.
    assert Link.objects.get(source=article("Publish/Security and privacy")).target == article(
        "Sync/Security and privacy"
    )
    apples = article("Orchard/Apples")
    assert list(Link.objects.filter(source=apples).values_list("target__path", flat=True)) == [
        "Orchard/Pears"
    ]


def test_the_shortest_path_wins_when_several_notes_share_a_name(vault, tmp_path):
    garden_write(vault[0], {"Notes.md": "See [[Pears]]."})
    call_command("import_garden", str(vault[0]), "--no-progress")
    assert Link.objects.get(source=article("Notes")).target == article("Pears")


def test_a_link_to_a_missing_note_is_a_red_link_counted_and_shown(vault, client):
    _, out = vault
    red = Link.objects.get(source=article("Bees/Swarm rules"), target__isnull=True)
    assert red.target_slug == "pruning-calendar"
    assert "1 link(s) point to notes that are not in the garden" in out

    html = client.get(article("Bees/Swarm rules").get_absolute_url()).content.decode()
    assert '<span class="red-link" title="No note of this name in the garden">Pruning calendar' in html
    assert "(missing)" in html


def test_a_red_link_turns_into_a_link_when_its_note_arrives(vault):
    folder, _ = vault
    garden_write(folder, {"Orchard/Pruning calendar.md": "Pruning is done in February."})
    call_command("import_garden", str(folder), "--no-progress")
    red = Link.objects.get(source=article("Bees/Swarm rules"))
    assert red.target == article("Orchard/Pruning calendar")


def test_pages_link_each_form_to_its_note_and_backlinks_list_every_linker(vault, client):
    varroa = article("Varroa treatment")
    html = client.get(article("Bees/Hive calendar").get_absolute_url()).content.decode()
    body, aside = html.split('<aside class="article-aside">')
    assert body.count(f'href="{varroa.get_absolute_url()}"') == 2  # '[[Mite plan]]' and the anchored link
    assert f'href="{varroa.get_absolute_url()}"' in aside  # it links here too: "Linked from"
    html = client.get(article("Publish/Security and privacy").get_absolute_url()).content.decode()
    assert f'<a href="{article("Sync/Security and privacy").get_absolute_url()}"' in html
    assert set(article_backlinks(varroa, ANONYMOUS)) == {article("Bees/Hive calendar")}
    assert set(article_backlinks(article("Bees/Swarm rules"), ANONYMOUS)) == {varroa}


def test_private_notes_reach_no_passage_no_page_and_no_answer(tmp_path, client, capsys):
    folder = garden_write(tmp_path / "vault", {**VAULT, **PRIVATE})
    call_command("import_garden", str(folder), "--no-progress")
    assert "3 marked private" in capsys.readouterr().out

    assert not Passage.objects.filter(text__contains="ZEPHYRCODE").exists()
    assert not Article.objects.filter(
        path__in=["Unpublished", "Draft", "Secret", "Drafts/Unfinished plan"]
    ).exists()
    assert "ZEPHYRCODE" not in client.get("/articles/").content.decode()
    for question in ["What is the ZEPHYRCODE gate code?", "What is the code of the gate?"]:
        asked = client.post("/api/ask", {"question": question}, "application/json").json()
        shown = str([asked["answer"], asked["sources"], asked["citations"]])
        assert "ZEPHYRCODE" not in shown and "4471" not in shown


SAMPLE_VAULT = Path(__file__).resolve().parents[2] / "garden" / "sample" / "vault"


@pytest.mark.slow  # the whole vault embedded
def test_the_sample_vault_imports_whole(capsys):
    """An Obsidian vault of 47 notes, 8 of them private, with every convention of a kept garden."""
    call_command("import_garden", str(SAMPLE_VAULT), "--no-progress")
    out = capsys.readouterr().out

    paths = set(
        Article.objects.filter(revisions__source_path__startswith=str(SAMPLE_VAULT)).values_list(
            "path", flat=True
        )
    )
    assert len(paths) == 39
    assert {"Sync/Security and privacy", "Publish/Security and privacy", "Daily/2025-06-07"} <= paths
    assert "3 marked private" in out
    assert "3 link(s) point to notes that are not in the garden" in out
    assert not Passage.objects.filter(text__contains="ZEPHYRCODE").exists()


# The smallest PNG there is: one transparent pixel.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082"
)

SYNTAX: dict[str, str | bytes] = {
    "Hives.md": """# Hives

Bramble hive was split on 4 May. ^split-day
The queen is ==marked blue== this year. %% remember: lock code 4471 %%
<!-- MOTHWING-01 a private reminder -->
status:: active
owner:: Priya Nair
Honey this year [yield:: 31 kg] was light.

> [!warning] Stings
> Wear a veil within 10 metres of the hives.

> [!tip]- Folded advice
> Smoke calms the colony.

```text
%% this is code, kept %% and ==kept== and key:: kept
```

| Hive | Frames |
|---|---|
| Bramble | 10 |
| Clover | 8 |

![[Calendar#Spring]]
![[Missing note]]
Feeding: [[Calendar#Autumn|in autumn]].
![[hive-plan.png]]
![the apiary](Attachments/apiary%20map.png)
![[missing-photo.jpg]]
![[report.pdf]]
""",
    "Calendar.md": "# Calendar\n\n## Spring\n\nThe first inspection is on 15 March.\n\n## Autumn\n\nFeeding starts in September.\n",
    "Pictures/hive-plan.png": PNG,
    "Attachments/apiary map.png": PNG + b"map",
    ".trash/missing-photo.jpg": PNG + b"deleted",
}


@pytest.fixture
def syntax(tmp_path: Path) -> Article:
    call_command("import_garden", str(garden_write(tmp_path / "g", SYNTAX)), "--no-progress")
    return article("Hives")


def test_editor_markup_is_neither_passage_text_nor_page_text(syntax, client):
    text = "\n".join(Passage.objects.filter(article=syntax).values_list("text", flat=True))
    page = client.get(syntax.get_absolute_url()).content.decode()
    for markup in ["^split-day", "==marked", "4471", "MOTHWING", "status::", "owner::", "Priya", "yield::"]:
        assert markup not in text.replace("==kept==", "") and markup not in page
    assert "Bramble hive was split on 4 May." in text and "The queen is marked blue this year." in text
    assert "Honey this year was light." in text
    assert "%% this is code, kept %% and ==kept== and key:: kept" in text  # code is left as written


def test_callouts_render_as_callouts_and_their_text_is_retrievable(syntax, client):
    page = client.get(syntax.get_absolute_url()).content.decode()
    assert (
        '<div class="callout callout-warning" role="note"><p class="callout-title"><strong>Warning</strong>: Stings</p>'
        in page
    )
    assert "<p>Wear a veil within 10 metres of the hives.</p></div>" in page
    assert (
        '<details class="callout callout-tip"><summary><strong>Tip</strong>: Folded advice</summary>' in page
    )
    assert Passage.objects.filter(article=syntax, text__contains="Wear a veil within 10 metres").exists()


def test_embeds_show_the_embedded_section_or_a_named_placeholder(syntax, client):
    page = client.get(syntax.get_absolute_url()).content.decode()
    calendar = article("Calendar")
    assert (
        f'<aside class="embed"><p class="embed-title">From <a href="{calendar.get_absolute_url()}">Calendar › Spring</a></p>'
        in page
    )
    assert "The first inspection is on 15 March." in page and "Feeding starts in September" not in page
    assert "Embedded note not in the garden: Missing note" in page
    assert "Attachment not shown here: report.pdf" in page


def test_an_embedded_image_in_the_garden_is_shown_and_one_that_is_not_is_named(syntax, client):
    page = client.get(syntax.get_absolute_url()).content.decode()
    shown = re.findall(r'<img src="([^"]+)" alt="([^"]+)" loading="lazy">', page)
    assert [alt for _, alt in shown] == [
        "hive-plan.png",
        "the apiary",
    ]  # by name anywhere; by path from the note
    response = client.get(shown[0][0])
    assert (response.status_code, response["Content-Type"], response.content) == (200, "image/png", PNG)
    assert client.get(shown[1][0]).content == PNG + b"map"
    assert "Image not in the garden: missing-photo.jpg" in page  # the copy in .trash/ is private


def test_code_blocks_and_tables_are_never_cut(tmp_path):
    code = "```text\n" + "\n\n".join(f"setting {i} = value {i}. More text." for i in range(60)) + "\n```"
    rows = "\n".join(f"| {2000 + i} | {i * 10} kg | A dry year. Few wasps. |" for i in range(60))
    body = f"Intro.\n\n{code}\n\nMiddle.\n\n| Year | Crop | Notes |\n|---|---|---|\n{rows}\n\nEnd."
    call_command("import_garden", str(garden_write(tmp_path / "g", {"Long.md": body})), "--no-progress")
    passages = list(Passage.objects.filter(article=article("Long")).order_by("ordinal"))
    revision = passages[0].revision
    assert all(revision.body[c.start : c.end] == c.text for c in passages)  # passage links land on the words
    assert [c.text.count("```") for c in passages if "```" in c.text] == [2]
    for passage in passages:
        for line in passage.text.split("\n"):
            assert not line.startswith("|") or line.endswith("|"), line  # whole rows only


def test_without_a_vocabulary_file_topics_come_from_tags_titles_and_aliases_and_themes_from_folders(vault):
    from garden.answering.retrieval import matched_themes, matched_topics
    from garden.models import Theme, Topic

    varroa = article("Varroa treatment")
    topics = {t.slug: t for t in Topic.objects.filter(articles=varroa)}
    assert set(topics) == {"bees", "health", "bees-health", "treating-hives-for-varroa"}
    assert topics["treating-hives-for-varroa"].aliases == ["Mite plan", "mites", "Varroa treatment"]
    assert topics["bees-health"].aliases == ["health"]
    assert set(
        Theme.objects.filter(articles=article("Bees/Hive calendar")).values_list("title", flat=True)
    ) == {"Bees"}
    # A question naming a note's alias or title finds its topic; one naming a top-level folder, its theme.
    assert topics["treating-hives-for-varroa"].pk in matched_topics("What is in the mite plan this year?")
    assert Topic.objects.get(slug="swarm-rules").pk in matched_topics("What do the swarm rules say?")
    assert Theme.objects.get(slug="orchard").pk in matched_themes("What grows in the orchard?")


GARDENS = Path(__file__).resolve().parent / "gardens"


def test_a_logseq_graph_imports_with_its_page_properties_and_journals():
    call_command("import_garden", str(GARDENS / "logseq"), "--no-progress")  # raises if any file failed
    forage = article("pages/Bee Forage Plants")
    assert (forage.title, forage.aliases) == ("Bee Forage Plants", ["forage", "bee plants"])
    assert {"bees", "plants", "nectar"} <= set(forage.tags)
    revision = forage.current_revision
    assert revision is not None and "title::" not in revision.body and "alias::" not in revision.body
    # Addresses come from titles, without Logseq's storage folder (`pages/`).
    assert forage.get_absolute_url() == "/articles/bee-forage-plants/"
    assert Link.objects.get(source=forage, target_slug="allotment-rota").target == article(
        "pages/Allotment Rota"
    )
    assert Article.objects.filter(path__startswith="journals/").count() == 2


def test_a_foam_or_dendron_folder_imports_with_dotted_names_and_epoch_dates():
    call_command("import_garden", str(GARDENS / "foam"), "--no-progress")
    design = article("projects.garden.design")
    assert design.slug == "projects-garden-design" and design.title == "Kitchen garden design"
    assert date_of("projects.garden.design") == datetime.date(2026, 3, 8)  # `updated`, epoch milliseconds
    assert Link.objects.get(source=design, target__isnull=False).target == article("projects.garden")


def test_an_mkdocs_docs_tree_imports_with_relative_links_and_one_index_per_folder():
    call_command("import_garden", str(GARDENS / "mkdocs"), "--no-progress")
    assert {a.path for a in Article.objects.filter(path__startswith="docs/")} == {
        "docs/index",
        "docs/guide/index",
        "docs/guide/install",
        "docs/reference/settings",
    }
    install = article("docs/guide/install")
    targets = set(Link.objects.filter(source=install).values_list("target__path", flat=True))
    assert targets == {"docs/reference/settings", "docs/guide/index"}


def test_a_link_to_a_heading_or_a_block_lands_on_its_passage(vault, syntax, client):
    swarm = article("Bees/Swarm rules").passages.get(is_current=True, text__contains="within two hours")
    page = client.get(article("Varroa treatment").get_absolute_url()).content.decode()
    assert (
        f'href="{article("Bees/Swarm rules").get_absolute_url()}#passage-{swarm.pk}"' in page
    )  # [[...#^swarm-rule]]

    autumn = article("Calendar").passages.get(is_current=True, text__contains="Feeding starts in September")
    page = client.get(syntax.get_absolute_url()).content.decode()
    assert (
        f'<a href="{article("Calendar").get_absolute_url()}#passage-{autumn.pk}" rel="noopener noreferrer">in autumn</a>'
        in page
    )
