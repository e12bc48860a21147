"""One writer of revisions: an import and an edit in the admin both write through `revisions_write`, and a
revision's content_hash follows one rule (garden/services.py), which keeps unchanged notes from importing again."""

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from django.contrib.postgres.search import SearchQuery
from django.core.management import call_command
from django.test import Client

from garden import services
from garden.models import Article, ArticleRevision, Passage
from garden.passages import passage_spans
from garden.services import NewRevision, embedding_input
from providers import embeddings
from tests.factories import garden_write

pytestmark = pytest.mark.django_db

NOTE = "---\ntitle: Hive inspections\n---\nThe hive is inspected every nine days in summer.\n"
# The hash of NOTE's file as every import since the first has stored it: SHA-256 of its text. Were it to change,
# every garden imported before would be imported again in full.
NOTE_HASH = "9bda455a4032d8c3e92faed6a0b634819da99a84137b43b40495d08262c5a04f"
EDITED = "The hive is inspected every seven days in summer."
# An edit has no file: SHA-256 of its title and body, a line apart.
EDITED_HASH = "c64f7d20b2b85762b40a16ffc6b7f301a9dbe88b98dbb91b5a451b3b40e3ad2d"


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[NewRevision]]]:
    """Every call of the one revision writer, by the import's writer and by the admin's service alike."""
    calls: list[list[NewRevision]] = []
    real = services.revisions_write

    def spy(new: Sequence[NewRevision]) -> list[ArticleRevision]:
        calls.append(list(new))
        return real(new)

    monkeypatch.setattr("garden.services.revisions_write", spy)
    monkeypatch.setattr("garden.sync.writing.revisions_write", spy)
    yield calls


def _import(folder: Path) -> None:
    call_command("import_garden", str(folder), "--no-progress")


def test_an_import_and_an_admin_edit_write_through_the_one_writer(tmp_path, written, admin_client: Client):
    _import(garden_write(tmp_path / "g", {"Hive inspections.md": NOTE}))
    assert [[new.title for new in call] for call in written] == [["Hive inspections"]]
    first = ArticleRevision.objects.get(article__slug="hive-inspections")
    assert first.content_hash == NOTE_HASH

    page = admin_client.post(
        f"/admin/garden/articlerevision/{first.pk}/change/",
        {
            "title": "Hive inspections",
            "body": EDITED,
            "date": "",
            "anchors": "{}",
            "images": "{}",
            "shows": "",
        },
    )

    assert page.status_code == 302, page.content.decode()[:2000]
    assert len(written) == 2 and [new.body for new in written[1]] == [EDITED]
    article = Article.objects.get(slug="hive-inspections")
    current = article.revisions.get(superseded=False)
    assert (current.body, current.source_path, current.content_hash) == (EDITED, "admin", EDITED_HASH)
    first.refresh_from_db()
    assert first.superseded and first.body == NOTE.split("---\n")[-1].strip()
    assert list(Passage.objects.filter(article=article, is_current=True).values_list("text", flat=True)) == [
        EDITED
    ]


def test_reimporting_an_unchanged_garden_writes_no_revision(tmp_path, written):
    folder = garden_write(tmp_path / "g", {"Hive inspections.md": NOTE})
    _import(folder)
    written.clear()

    _import(folder)

    assert written == []
    revisions = ArticleRevision.objects.filter(article__slug="hive-inspections")
    assert list(revisions.values_list("content_hash", "superseded")) == [(NOTE_HASH, False)]


def test_a_note_saved_with_windows_line_ends_and_a_byte_order_mark_is_the_same_note(tmp_path, written):
    folder = garden_write(tmp_path / "g", {"Hive inspections.md": NOTE})
    _import(folder)
    written.clear()
    garden_write(folder, {"Hive inspections.md": "\ufeff" + NOTE.replace("\n", "\r\n")})

    _import(folder)

    assert written == []
    assert ArticleRevision.objects.get(article__slug="hive-inspections").content_hash == NOTE_HASH


def test_a_revision_s_passages_are_stored_with_their_vectors_exactly_and_found_by_their_words(tmp_path):
    # The writer COPYs passages with their vectors in binary: each stored vector is the one its text was given.
    body = "## Summer\n\nThe hive is inspected every nine days.\n\n## Winter\n\nThe hive is left closed and fed fondant."
    article = Article.objects.create(slug="winter-hives", title="Winter hives")
    spans = [(s.start, s.end) for s in passage_spans(body)]
    vectors = embeddings.embed([embedding_input("Winter hives", body[a:b]) for a, b in spans])

    (revision,) = services.revisions_write(
        [NewRevision(article=article, title="Winter hives", body=body, spans=spans, vectors=vectors.tolist())]
    )

    stored = list(Passage.objects.filter(revision=revision).order_by("ordinal"))
    assert [(p.text, p.start, p.end, p.page, p.is_current) for p in stored] == [
        (body[a:b], a, b, None, True) for a, b in spans
    ]
    assert np.array_equal(np.array([p.embedding for p in stored], dtype=np.float32), vectors)
    assert {p.embedded_by for p in stored} == {embeddings.embedder()}
    found = Passage.objects.filter(search_vector=SearchQuery("fondant", config="english"))
    assert [p.pk for p in found] == [p.pk for p in stored if "fondant" in p.text]
