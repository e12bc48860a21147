"""A note's language for full-text search: the one it names (front matter `lang:`, Logseq's `lang::`, Org's
`#+LANGUAGE:`), else the one its words clearly show, else the garden's (`GARDEN_LANGUAGE`); PostgreSQL's
configuration of that name, `simple` for a language PostgreSQL has none for."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from garden.formats.markdown import parse_article_text
from garden.formats.org.reading import parse_org_text
from garden.languages import CONFIGURATIONS, SIMPLE, configuration, detected, note_language
from garden.models import Article, Passage
from garden.services import revision_create
from tests.factories import garden_write

GERMAN = (
    "Die Bienenvölker stehen seit 1987 am Südhang hinter der Scheune. Im Spätsommer ernten die Imker den Honig "
    "und schleudern ihn in der alten Waschküche."
)
FRENCH = (
    "Le fromage de chèvre est affiné pendant trois semaines dans la cave voûtée sous le moulin. Les fromagers "
    "retournent les tommes chaque matin et les frottent avec de la saumure."
)
ENGLISH = (
    "The viaduct was built in 1889 and it carried the branch line over the river until the station closed, "
    "which the parish council regretted for years."
)


def test_a_language_is_named_by_its_code_or_by_its_configuration():
    assert configuration("de") == configuration("de-AT") == configuration("German") == "german"
    assert configuration("pt_BR") == "portuguese"
    assert configuration(" FR ") == "french"
    assert configuration("ja") == configuration("klingon") == SIMPLE


def test_every_configuration_named_is_one_postgresql_has(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT cfgname FROM pg_ts_config")
        server = {name for (name,) in cursor.fetchall()}
    assert set(CONFIGURATIONS.values()) | {SIMPLE} <= server


def test_a_note_s_words_show_its_language_when_they_show_one_clearly():
    assert detected(GERMAN) == "german"
    assert detected(FRENCH) == "french"
    assert detected(ENGLISH) == "english"
    assert detected("Honig, Wachs, Propolis") is None  # too few common words to tell
    assert detected(f"{GERMAN} {FRENCH}") is None  # two languages near each other


def test_the_language_a_note_names_wins_then_its_words_then_the_garden_s():
    assert note_language("fr", GERMAN, "english") == "french"
    assert note_language("", GERMAN, "english") == "german"
    assert note_language("", "Honig, Wachs, Propolis", "de") == "german"


@pytest.mark.parametrize(
    "text",
    [
        "---\nlang: de\n---\n# Honig\n\nHonig.\n",
        "---\nlanguage: de\n---\nHonig.\n",
        "lang:: de\n\n- Honig.\n",
    ],
)
def test_a_markdown_note_names_its_language_in_front_matter_or_page_properties(text):
    assert parse_article_text(text, path="/g/honig.md", slug="honig").language == "de"


def test_norwegian_s_code_is_norwegian_though_yaml_reads_it_as_false():
    note = parse_article_text("---\nlang: no\n---\nHonning.\n", path="/g/honning.md", slug="honning")
    assert configuration(note.language) == "norwegian"


def test_an_org_file_names_its_language_with_its_language_keyword():
    note = parse_org_text("#+TITLE: Honig\n#+LANGUAGE: de\n\nHonig.\n", path="/g/honig.org", place="honig")
    assert note.language == "de" and "LANGUAGE" not in note.body


def _languages(path: str) -> set[str]:
    return set(Passage.objects.filter(article__path=path, is_current=True).values_list("language", flat=True))


@pytest.mark.django_db
def test_an_import_stems_each_note_in_its_language(tmp_path: Path, settings):
    settings.GARDEN_LANGUAGE = "de"
    folder = garden_write(
        tmp_path / "garden",
        {
            "Bienen.md": f"# Bienen\n\n{GERMAN}\n",
            "Fromage.org": f"#+TITLE: Fromage\n#+LANGUAGE: fr\n\n{FRENCH}\n",
            "Beute.md": "lang:: es\n\n- Colmena\n",
            "Wabe.md": "---\nlang: ja\n---\n巣箱の点検は毎週行う。\n",
            "Wachs.md": "# Wachs\n\nWachs, Propolis.\n",
            "Viaduct.md": f"# Viaduct\n\n{ENGLISH}\n",
        },
    )
    call_command("import_garden", str(folder), "--no-progress")
    assert _languages("Bienen") == {"german"}  # detected
    assert _languages("Fromage") == {"french"}  # `#+LANGUAGE: fr`
    assert _languages("Beute") == {"spanish"}  # `lang:: es`
    assert _languages("Wabe") == {SIMPLE}  # PostgreSQL has no Japanese configuration
    assert _languages("Wachs") == {"german"}  # too short to tell: the garden's language
    assert _languages("Viaduct") == {"english"}  # detected, whatever the garden's language


@pytest.mark.django_db
def test_an_edit_in_the_admin_keeps_its_note_s_language(tmp_path: Path):
    folder = garden_write(tmp_path / "garden", {"Fromage.md": f"---\nlang: fr\n---\n# Fromage\n\n{FRENCH}\n"})
    call_command("import_garden", str(folder), "--no-progress")
    article = Article.objects.get(path="Fromage")
    revision_create(article=article, title="Fromage", body="Tommes de chèvre, saumure.")
    assert _languages("Fromage") == {"french"}
