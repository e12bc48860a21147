"""Logseq graphs import whole, as Logseq shows them: titles from `title::` or the file name in the graph's format,
journals by date, addresses from titles, page properties as metadata, block references and embeds as the
blocks' words (never ids, never braces), private blocks nowhere, one page per title."""

import datetime
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from garden.formats.logseq.blocks import BLOCK_LINES_MAX, Block, page_blocks
from garden.formats.logseq.dates import date_formatted, date_parsed
from garden.formats.logseq.edn import EdnError, edn_read
from garden.formats.logseq.graph import LEGACY as LEGACY_FILE_NAMES
from garden.formats.logseq.graph import TRIPLE_LOWBAR, file_name_decoded, graph_of, is_graph
from garden.formats.logseq.resolution import BLOCK_NOT_SHOWN
from garden.golden import golden_load
from garden.models import Answer, Article, ArticleRevision, Link, Passage
from tests.factories import answer_for, garden_write
from text.markup import heading_words

GARDENS = Path(__file__).resolve().parent / "gardens"
GRAPH = GARDENS / "logseq-graph"
LEGACY = GARDENS / "logseq-legacy"
GOLDEN = GARDENS / "logseq-graph-golden.yaml"
SECRET = "Plumvane"  # a word only the private page (and Logseq's backup of it) holds
HIDDEN = "Quarrelsome"  # a word only the page in a folder config.edn hides holds
LONG_QUESTION = (
    "Questions/How long may a member keep a borrowed tool when the library is closed for the winter break "
    "between Christmas Eve and the first Tuesday of January, and who should they tell if they need it for "
    "longer than that because of a job"
)


def test_config_edn_is_read_for_the_keys_the_import_needs(tmp_path):
    graph = graph_of(GRAPH)
    assert graph is not None and not graph.problem
    assert (graph.file_name_format, graph.title_format, graph.hidden) == (
        TRIPLE_LOWBAR,
        "MMM do, yyyy",
        ("/archive",),
    )
    legacy = graph_of(LEGACY)
    assert legacy is not None and legacy.file_name_format == LEGACY_FILE_NAMES
    assert graph_of(GARDENS / "foam") is None  # no config.edn, no pages/ and journals/


def test_a_journal_is_titled_by_its_iso_date_when_the_graph_names_no_format(db, tmp_path):
    folder = garden_write(
        tmp_path / "g",
        {"pages/Hives.md": "- The hives are checked weekly.", "journals/2021_07_19.md": "- Checked hive 3."},
    )
    call_command("import_garden", str(folder), "--no-progress")
    journal = Article.objects.get(title="2021-07-19")
    revision = ArticleRevision.objects.get(article=journal)
    assert revision.date == datetime.date(2021, 7, 19) and journal.slug == "2021-07-19"


def test_an_odd_config_edn_keeps_logseq_s_defaults_and_says_so(tmp_path):
    folder = garden_write(
        tmp_path / "g",
        {
            "logseq/config.edn": '{:file/name-format :triple-lowbar :journal/page-title-format "yyyy/MM/dd" '
            ':macros {"x" [unclosed}',
            "pages/a.md": "- a",
        },
    )
    graph = graph_of(folder)
    assert graph is not None
    assert graph.problem.startswith("could not be read whole (not EDN:")
    assert (graph.file_name_format, graph.title_format) == (TRIPLE_LOWBAR, "yyyy/MM/dd")
    (folder / "logseq/config.edn").write_bytes(b"\xff\xfe[[[" * 10_000)
    graph = graph_of(folder)
    assert graph is not None and graph.problem and graph.file_name_format == LEGACY_FILE_NAMES


def test_edn_reader():
    assert edn_read('{:a "x\\"y" :b [1 2.5 nil true] #_ :gone :c #{:d} :e {:f #inst "2020"}} ; end') == {
        ":a": 'x"y',
        ":b": [1, 2.5, None, True],
        ":c": [":d"],
        ":e": {":f": "2020"},
    }
    with pytest.raises(EdnError):
        edn_read("[" * 10_000)


@pytest.mark.parametrize(
    ("name", "name_format", "title"),
    [
        ("Whiteboard___Tool___Eraser", TRIPLE_LOWBAR, "Whiteboard/Tool/Eraser"),
        ("What is a torque wrench%3F", TRIPLE_LOWBAR, "What is a torque wrench?"),
        ("term.page title", TRIPLE_LOWBAR, "term.page title"),
        ("Garden.Tools.Spade", LEGACY_FILE_NAMES, "Garden/Tools/Spade"),
        ("Garden%2FSoil", LEGACY_FILE_NAMES, "Garden/Soil"),
        ("v1.2 notes%3F", LEGACY_FILE_NAMES, "v1.2 notes?"),
    ],
)
def test_file_names_decode_in_the_graph_s_format(name, name_format, title):
    assert file_name_decoded(name, name_format) == title


def test_dates_in_the_graph_s_formats():
    day = datetime.date(2021, 7, 19)
    assert date_formatted(day, "MMM do, yyyy") == "Jul 19th, 2021"
    assert date_formatted(datetime.date(2021, 7, 2), "EEEE, MMMM d yyyy") == "Friday, July 2 2021"
    assert date_parsed("Jul 19th, 2021", "MMM do, yyyy") == day
    assert date_parsed("2025-02-22 Sat", "yyyy-MM-dd EEE") == datetime.date(2025, 2, 22)
    assert date_parsed("2021_07_19", "yyyy_MM_dd") == day
    assert date_parsed("Jul 32nd, 2021", "MMM do, yyyy") is None


def test_a_title_from_a_heading_is_its_words():
    assert heading_words("[The Twelve-Factor App](https://12factor.net/)") == "The Twelve-Factor App"
    assert heading_words("One-time escape hatch - [[git/hook]] are broken") == (
        "One-time escape hatch - git/hook are broken"
    )
    assert heading_words("**Bold** and _quiet_ `code` [[a|shown]]") == "Bold and quiet code shown"


@pytest.fixture
def graph(db, tmp_path, capsys) -> tuple[Path, str]:
    folder = tmp_path / "graph"
    shutil.copytree(GRAPH, folder)
    call_command("import_garden", str(folder), "--no-progress")  # raises (exit 1) if any file failed
    return folder, capsys.readouterr().out


def titled(title: str) -> Article:
    return Article.objects.get(title=title)


def current(article: Article) -> ArticleRevision:
    revision = article.current_revision
    assert revision is not None
    return revision


def page(client, article: Article) -> str:
    response = client.get(article.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def test_a_graph_imports_whole_with_titles_and_addresses_as_logseq_shows_them(graph):
    titles = {a.path: (a.title, a.get_absolute_url()) for a in Article.objects.all()}
    assert titles["pages/Workshop___Safety___Eye Protection"] == (
        "Workshop/Safety/Eye Protection",
        "/articles/workshop-safety-eye-protection/",
    )
    assert titles["pages/Tool Library"] == ("Tool Library", "/articles/tool-library/")
    assert titles["pages/What is a torque wrench%3F"][0] == "What is a torque wrench?"
    # Two files that make one address in the old way are two pages, each at its title's address.
    assert titles["pages/term___page title"] == ("term/page title", "/articles/term-page-title/")
    assert titles["pages/term.page title"] == ("custom page title", "/articles/custom-page-title/")
    # Distinct titles whose words make one slug are told apart, none fails.
    assert titles["pages/Key"][1] == "/articles/key/"
    assert titles["pages/Key___&"][0] == "Key/&" and titles["pages/Key___&"][1].startswith("/articles/key-")
    yue = {titles["pages/Person___Yue Zhang"][1], titles["pages/Person___Yue_Zhang"][1]}
    assert len(yue) == 2 and "/articles/person-yue-zhang/" in yue
    # A journal is titled by its date in the graph's format, and dated by it.
    journal = Article.objects.get(path="journals/2026_04_18")
    assert (journal.title, journal.get_absolute_url()) == ("Apr 18th, 2026", "/articles/apr-18th-2026/")
    assert current(journal).date == datetime.date(2026, 4, 18)
    assert current(titled("Lathe")).date == datetime.date(2025, 3, 3)  # `date:: [[Mar 3rd, 2025]]`
    assert not any(url.startswith(("/articles/pages-", "/articles/journals-")) for _, url in titles.values())


def test_titles_of_any_length_are_kept_whole(graph, client):
    question = titled(LONG_QUESTION)
    assert len(question.slug) <= 200 and question.slug.startswith("questions-how-long-may-a-member")
    assert "Ines Okafor" in page(client, question)
    forms = Article.objects.get(path="pages/Forms")
    assert len(forms.title) > 300 and forms.title.startswith("Volunteer handbook/Why does the tool library")


def test_the_import_says_once_which_files_claim_one_title_and_exits_0(graph):
    _, out = graph
    lines = [line for line in out.splitlines() if "Drill Press" in line]
    assert len(lines) == 1
    assert "pages/Drill Press.md and " in lines[0] and "pages/drill press (old notes).md" in lines[0]
    assert lines[0].startswith("NOTE ") and "was imported" in lines[0]
    assert Article.objects.filter(title__iexact="Drill Press").count() == 1
    assert Article.objects.get(title="Drill Press").path == "pages/Drill Press"  # the first by path


def test_page_properties_are_metadata_and_a_description_is_text(graph, client):
    library = titled("Tool Library")
    assert library.aliases == ["lending library", "the library"]
    assert {"harrowgate", "community"} <= set(library.tags)
    sharpening = titled("Sharpening")
    assert sharpening.aliases == ["honing"]
    assert "skill" in sharpening.tags  # `type:: [[Skill]]` is kept as a tag
    html = page(client, sharpening)
    assert "first Thursday of each month" in html and "description::" not in html
    assert Passage.objects.filter(article=sharpening, text__contains="first Thursday of each month").exists()
    # A page of properties alone, with no description, is its title, with its links.
    skill = titled("Skill")
    assert current(skill).body == "Skill"
    assert Link.objects.get(source=skill).target == library
    assert "the article has no body" not in graph[1]


def test_links_name_pages_by_title_alias_and_namespace(graph):
    library = titled("Tool Library")
    eye = titled("Workshop/Safety/Eye Protection")
    targets = set(
        Link.objects.filter(source=library, target__isnull=False).values_list("target__title", flat=True)
    )
    assert {"Lathe", "Sharpening", "Workshop/Safety/Eye Protection"} <= targets
    assert Link.objects.filter(source=titled("Workshop/Safety"), target=eye).exists()
    journal = Article.objects.get(path="journals/2026_04_18")
    linked = set(
        Link.objects.filter(source=journal, target__isnull=False).values_list("target__title", flat=True)
    )
    # A namespaced title, and aliases (`alias:: honing`, `alias:: lending library, the library`).
    assert linked == {"Person/Yue Zhang", "Lathe", "Sharpening", "Tool Library"}
    assert Link.objects.filter(source=titled("Skill"), target=library).exists()


def test_block_references_and_embeds_show_the_blocks_words_with_a_link_to_their_page(graph, client):
    library = titled("Tool Library")
    eye = titled("Workshop/Safety/Eye Protection")
    html = page(client, library)
    assert "Safety glasses to EN 166 are worn by everyone" in html
    assert f'<a href="{eye.get_absolute_url()}"' in html
    # `{{embed ((id))}}` brings the block with its children.
    assert "need a full face shield" in html and "never with solvent" in html
    # `{{embed [[page]]}}` is an embed of the page.
    assert (
        f'<p class="embed-title">From <a href="{eye.get_absolute_url()}">Workshop/Safety/Eye Protection'
        in html
    )
    passages = "\n".join(
        Passage.objects.filter(article=library, is_current=True).values_list("text", flat=True)
    )
    assert "Safety glasses to EN 166" in passages  # retrieval and the judge see the words
    journal = page(client, Article.objects.get(path="journals/2026_04_18"))
    assert "Record Power DML320" in journal


def test_no_id_macro_or_block_property_reaches_a_page_or_a_passage(graph, client):
    passages = "\n".join(Passage.objects.filter(is_current=True).values_list("text", flat=True))
    shown = passages + "".join(page(client, article) for article in Article.objects.live())
    raws = ["((", "{{", "id::", "collapsed::", "card-", "logseq.order-list-type", "heading::", "6a1f0c2e"]
    for raw in [*raws, ":LOGBOOK:", "CLOCK:", ":END:", "#+BEGIN_QUOTE", "#+END_QUOTE"]:
        assert raw not in shown, raw
    assert "A sharp bit and a slow speed beat a blunt bit and force." in page(client, titled("Drill Press"))
    library = page(client, titled("Tool Library"))
    assert "Borrow, use, return, repeat" in library  # a cloze's words
    assert "(query shown in Logseq only)" in library and "(renderer shown in Logseq only)" in library
    assert 'href="https://example.org/harrowgate/workshop.mp4"' in library


def test_a_private_page_s_blocks_show_nowhere_even_where_another_page_references_them(graph, client):
    assert not Article.objects.filter(path="pages/Member Dues").exists()
    assert not Passage.objects.filter(text__contains=SECRET).exists()
    assert not Passage.objects.filter(text__contains="40-11-72").exists()
    html = page(client, titled("Tool Library"))
    assert SECRET not in html and "40-11-72" not in html and "hardship" not in html
    assert html.count(BLOCK_NOT_SHOWN) == 2
    assert "Embedded note not in the garden: Member Dues" in html
    for question in [f"How are dues paid by {SECRET}?", "What is the treasurer's account number?"]:
        asked = client.post("/api/ask", {"question": question}, "application/json").json()
        shown = str([asked["answer"], asked["sources"], asked["citations"]])
        assert SECRET not in shown and "40-11-72" not in shown
    # Hidden by config.edn, and Logseq's own backups: never imported.
    assert not Passage.objects.filter(text__contains=HIDDEN).exists()
    assert not Article.objects.filter(path__startswith=("archive/")).exists()


def test_an_edited_block_reaches_the_pages_that_reference_it_on_the_next_sync(graph, client):
    folder, _ = graph
    eye = folder / "pages/Workshop___Safety___Eye Protection.md"
    eye.write_text(eye.read_text().replace("to EN 166", "to EN 166 or ANSI Z87.1"))
    call_command("import_garden", str(folder), "--no-progress")
    assert "EN 166 or ANSI Z87.1" in page(client, titled("Tool Library"))
    assert Passage.objects.filter(
        article=titled("Tool Library"), is_current=True, text__contains="Z87.1"
    ).exists()


def test_a_referenced_block_made_private_leaves_every_page_and_does_not_come_back(graph, client):
    folder, _ = graph
    eye = folder / "pages/Workshop___Safety___Eye Protection.md"
    public = eye.read_text()
    library = titled("Tool Library")
    for _ in range(2):  # private, public, private again: the last text is an older one, and must win
        eye.write_text("public:: false\n\n" + public)
        call_command("import_garden", str(folder), "--no-progress")
        html = page(client, library)
        assert "Safety glasses to EN 166" not in html
        current = Passage.objects.filter(article=library, is_current=True)
        assert not current.filter(text__contains="EN 166").exists()
        eye.write_text(public)
        call_command("import_garden", str(folder), "--no-progress")
        assert "Safety glasses to EN 166" in page(client, library)
    eye.write_text("public:: false\n\n" + public)
    call_command("import_garden", str(folder), "--no-progress")
    assert "Safety glasses to EN 166" not in page(client, library)


def test_addresses_stay_put_across_syncs(graph):
    folder, _ = graph
    before = dict(Article.objects.values_list("path", "slug"))
    call_command("import_garden", str(folder), "--no-progress")
    assert dict(Article.objects.values_list("path", "slug")) == before


@pytest.mark.django_db
def test_a_legacy_graph_decodes_dots_and_escapes_and_its_date_format(tmp_path):
    folder = tmp_path / "legacy"
    shutil.copytree(LEGACY, folder)
    call_command("import_garden", str(folder), "--no-progress")
    titles = dict(Article.objects.filter(garden=str(folder)).values_list("path", "title"))
    assert titles == {
        "pages/Garden.Tools.Spade": "Garden/Tools/Spade",
        "pages/Garden%2FSoil": "Garden/Soil",
        "pages/Why compost%3F": "Why compost?",
        "journals/2026_02_22": "2026-02-22 Sun",
    }
    why = Article.objects.get(title="Why compost?")
    assert current(why).date == datetime.date(2026, 2, 22)
    assert set(Link.objects.filter(source=why).values_list("target__title", flat=True)) == {
        "Garden/Soil",
        "Garden/Tools/Spade",
    }


@pytest.mark.django_db
def test_an_odd_config_edn_never_fails_the_import_and_is_told(tmp_path, capsys):
    folder = tmp_path / "odd"
    shutil.copytree(LEGACY, folder)
    (folder / "logseq/config.edn").write_text(
        '{:meta/version 1 :journal/page-title-format "yyyy-MM-dd EEE" ['
    )
    call_command("import_garden", str(folder), "--no-progress")
    out = capsys.readouterr().out
    assert f"NOTE {folder / 'logseq/config.edn'}: could not be read whole (not EDN:" in out
    assert Article.objects.get(path="journals/2026_02_22").title == "2026-02-22 Sun"


def test_the_golden_set_names_pages_the_graph_has(graph):
    expected = {slug for entry in golden_load(GOLDEN) for slug in entry.expected_articles}
    assert expected and expected <= set(Article.objects.live().values_list("slug", flat=True))


def test_a_page_with_its_own_title_that_can_no_longer_be_read_is_withheld(graph, client):
    folder, _ = graph
    # `term.page title.md` is titled `custom page title` by its `title::`: its address is not its file name's.
    renamed = titled("custom page title")
    assert client.get(renamed.get_absolute_url()).status_code == 200
    (folder / "pages/term.page title.md").write_bytes(b"title:: custom page title\n\n- \xff\xfe not UTF-8\n")
    with pytest.raises(CommandError, match="1 file"):
        call_command("import_garden", str(folder), "--no-progress")
    renamed.refresh_from_db()
    assert renamed.withheld
    assert client.get(renamed.get_absolute_url()).status_code == 404


def test_an_obsidian_vault_with_folders_named_pages_and_journals_keeps_its_addresses(tmp_path):
    folder = garden_write(tmp_path / "vault", {"pages/a.md": "A.", "journals/2026_01_01.md": "B."})
    assert is_graph(folder)
    (folder / ".obsidian").mkdir()
    assert not is_graph(folder)


@pytest.mark.django_db
def test_a_date_property_that_is_no_date_leaves_the_page_its_file_s_date(tmp_path):
    folder = garden_write(
        tmp_path / "g",
        {"logseq/config.edn": "{}", "pages/Plan.md": "date:: sometime in spring\n\n- Sow the beans."},
    )
    call_command("import_garden", str(folder), "--no-progress")  # no "not an ISO date" failure
    assert current(titled("Plan")).date == datetime.datetime.now(datetime.UTC).date()


def test_a_block_is_its_line_its_continuation_and_the_blocks_under_it():
    body = (
        "- First block\n  id:: 0000aaaa-0000-4000-8000-000000000001\n\t- child one\n\t\t- grandchild\n"
        "- Second\n  collapsed:: true\n  id:: 0000aaaa-0000-4000-8000-000000000002\n  more of second\n"
        "Paragraph\nid:: 0000AAAA-0000-4000-8000-000000000003\n"
    )
    assert page_blocks(body) == {
        "0000aaaa-0000-4000-8000-000000000001": Block("First block", ("child one", "grandchild")),
        "0000aaaa-0000-4000-8000-000000000002": Block("Second more of second"),
        "0000aaaa-0000-4000-8000-000000000003": Block("Paragraph"),
    }
    nested = "".join(
        f"{chr(9) * i}- block {i}\n{chr(9) * i}  id:: 0000aaaa-0000-4000-8000-{i:012d}\n" for i in range(80)
    )
    first = page_blocks(nested)["0000aaaa-0000-4000-8000-000000000000"]
    assert len(first.subtree) == BLOCK_LINES_MAX - 1  # an embed shows a block's first lines, not a page


@pytest.mark.django_db
def test_names_of_any_length_import_whole(tmp_path, client):
    name = "Why " + "does the library close " * 10  # 234 characters, a file name near the limit of 255 bytes
    alias, tag, title = "another name " * 40, "a-very-long-tag-" * 25, "Namespace/" * 20 + name
    folder = garden_write(
        tmp_path / "g",
        {
            "logseq/config.edn": '{:file/name-format :triple-lowbar :hidden ["pages/Hidden.md"]}',
            f"pages/{name.strip()}.md": f"alias:: {alias.strip()}\ntags:: {tag}\n\n- It closes in August.",
            "pages/Long.md": f"title:: {title.strip()}\n\n- A page of a long namespace.",
            "pages/Hidden.md": f"- {HIDDEN} and hidden.",
            "pages/Links.md": f"- See [[{alias.strip()}]] and [[{title.strip()}]].",
        },
    )
    call_command("import_garden", str(folder), "--no-progress")
    why = titled(name.strip())
    assert (why.aliases, why.tags) == ([alias.strip()], [tag])
    long = titled(title.strip())
    assert len(long.title) > 400 and len(long.slug) <= 200
    assert set(Link.objects.filter(source=titled("Links")).values_list("target", flat=True)) == {
        why.pk,
        long.pk,
    }
    assert client.get(long.get_absolute_url()).status_code == 200
    assert not Passage.objects.filter(text__contains=HIDDEN).exists()


def test_what_a_page_showed_of_a_block_made_private_since_is_withheld_in_its_history_and_answers(
    graph, client
):
    folder, _ = graph
    library = titled("Tool Library")
    quoting = Passage.objects.get(article=library, is_current=True, text__contains="EN 166")
    answer = answer_for("Safety glasses to EN 166 are worn by everyone [1].", quoting)
    old = current(library)
    assert old.shows == ["pages/Workshop___Safety___Eye Protection"]
    assert client.get(f"{library.get_absolute_url()}?revision={old.pk}").status_code == 200
    assert Answer.objects.readable().filter(pk=answer.pk).exists()

    eye = folder / "pages/Workshop___Safety___Eye Protection.md"
    eye.write_text("public:: false\n\n" + eye.read_text())
    call_command("import_garden", str(folder), "--no-progress")

    assert client.get(f"{library.get_absolute_url()}?revision={old.pk}").status_code == 404
    assert "EN 166" not in page(client, library)  # its new revision shows the block no more
    assert not Answer.objects.readable().filter(pk=answer.pk).exists()
    assert "EN 166" not in client.get(f"/answers/{answer.public_id}/").content.decode()


def test_topics_are_named_by_titles_never_by_storage_file_names(graph):
    from garden.models import Topic

    names = [name for topic in Topic.objects.all() for name in [topic.title, *topic.aliases]]
    assert "Workshop/Safety/Eye Protection" in names
    assert not [name for name in names if "___" in name or name == "2026_04_18"], names
