"""Import is sync: unchanged notes cost nothing, an edit re-embeds only what changed, a deleted note is retired
with its history kept, a moved note keeps its article, and an interrupted import resumes."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command

from config.database import current_database_url
from garden.models import Article, ArticleRevision, Link, Passage, Topic
from garden.sync import SYNC_LOCK, ImportReport, garden_import, garden_sync_configured, garden_watch
from providers import embeddings
from tests.factories import answer_for, garden_write

pytestmark = pytest.mark.django_db

PARAGRAPH = (
    "The {name} hive stands at the north end of the orchard, beside the old damson. It was built by the "
    "cooperative in {year} from larch boards and holds eleven frames in its brood box. Inspections happen "
    "every nine days from April to August, and the colony is fed fondant in February when the stores run low. "
    "Its queen was marked {colour} the year she was introduced, and she has headed the colony since then."
)


def note(name: str, year: int, colour: str = "red") -> str:
    return "\n\n".join(PARAGRAPH.format(name=f"{name} {part}", year=year, colour=colour) for part in "ABC")


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    folder = garden_write(
        tmp_path / "garden",
        {
            "Hives/Bramble.md": note("Bramble", 2015),
            "Hives/Clover.md": note("Clover", 2018) + "\n\nSee [[Bramble]].",
            "Orchard.md": "The orchard has 146 trees. The [[Bramble]] hive is at its north end.",
        },
    )
    garden_import([folder])
    return folder


def embeds_nothing(texts, **kwargs):
    raise AssertionError(f"embedded {len(texts)} texts; nothing had changed")


def test_an_unchanged_garden_embeds_nothing(garden, monkeypatch):
    monkeypatch.setattr(embeddings, "embed", embeds_nothing)
    report = garden_import([garden])
    assert (report.unchanged, report.created, report.revised, report.embedded) == (3, 0, 0, 0)


def test_an_edit_re_embeds_only_the_passages_it_changed(garden):
    bramble = Article.objects.get(path="Hives/Bramble")
    before = list(bramble.passages.filter(is_current=True).order_by("ordinal").values_list("text", flat=True))
    assert len(before) == 3
    edited = note("Bramble", 2015).replace("marked red", "marked blue", 1)
    garden_write(garden, {"Hives/Bramble.md": edited})

    report = garden_import([garden])

    assert (report.revised, report.passages, report.embedded) == (1, 3, 1)
    assert ArticleRevision.objects.filter(article=bramble).count() == 2
    assert "marked blue" in bramble.passages.get(is_current=True, ordinal=0).text


def test_a_deleted_note_is_retired_its_history_and_citing_answers_kept(garden, client):
    bramble = Article.objects.get(path="Hives/Bramble")
    passage = bramble.passages.first()
    assert passage is not None
    cited = answer_for("The Bramble hive holds eleven frames [1].", passage)
    (garden / "Hives" / "Bramble.md").unlink()

    report = garden_import([garden])

    bramble.refresh_from_db()
    assert report.retired == 1 and bramble.retired_at is not None
    assert not Passage.objects.filter(article=bramble, is_current=True).exists()  # never retrieved again
    assert bramble.title not in client.get("/articles/").content.decode()
    page = client.get(bramble.get_absolute_url()).content.decode()
    assert "this note left the garden" in page and "eleven frames" in page  # its history stays readable
    assert client.get(cited.get_absolute_url()).status_code == 200


def test_a_note_that_comes_back_is_live_again(garden):
    text = (garden / "Hives" / "Bramble.md").read_text()
    (garden / "Hives" / "Bramble.md").unlink()
    garden_import([garden])
    garden_write(garden, {"Hives/Bramble.md": text})

    garden_import([garden])

    bramble = Article.objects.get(path="Hives/Bramble")
    assert bramble.retired_at is None and bramble.passages.filter(is_current=True).count() == 3


def test_a_note_made_private_is_withheld_not_retired(garden):
    garden_write(garden, {"Orchard.md": "---\npublish: false\n---\nThe orchard has 146 trees."})
    report = garden_import([garden])
    orchard = Article.objects.get(path="Orchard")
    assert (report.retired, report.withheld) == (0, 1)
    assert orchard.withheld and orchard.withheld_reason == "made private"
    assert not orchard.passages.filter(is_current=True).exists()  # never retrieved


def test_a_moved_or_renamed_note_keeps_its_article_history_and_backlinks(garden):
    bramble = Article.objects.get(path="Hives/Bramble")
    revisions = list(bramble.revisions.values_list("pk", flat=True))
    (garden / "Hives" / "Bramble.md").rename(garden / "Bramble hive.md")

    report = garden_import([garden])

    moved = Article.objects.get(pk=bramble.pk)
    assert (report.moved, report.retired, report.created) == (1, 0, 0)
    assert (moved.path, moved.slug) == ("Bramble hive", "bramble-hive")
    assert list(moved.revisions.values_list("pk", flat=True)) == revisions
    assert set(Link.objects.filter(target=moved).values_list("source__path", flat=True)) == {
        "Hives/Clover",
        "Orchard",
    }


@pytest.mark.slow  # 360 passages embedded, twice over
def test_an_interrupted_import_resumes_where_it_stopped(tmp_path, monkeypatch):
    folder = garden_write(
        tmp_path / "big", {f"Note {n:03}.md": note(f"Hive {n}", 2000 + n) for n in range(120)}
    )
    real_embed, calls = embeddings.embed, []

    def embed_then_die(texts, **kwargs):
        calls.append(len(texts))
        if sum(calls) > 300:  # partway through the second group of notes
            raise KeyboardInterrupt
        return real_embed(texts, **kwargs)

    monkeypatch.setattr(embeddings, "embed", embed_then_die)
    with pytest.raises(KeyboardInterrupt):
        garden_import([folder])
    stored = Article.objects.filter(path__startswith="Note ").count()
    assert 0 < stored < 120
    assert all(
        a.passages.count() == 3 for a in Article.objects.filter(path__startswith="Note ")
    )  # none half-written

    monkeypatch.setattr(embeddings, "embed", real_embed)
    report = garden_import([folder])
    assert (report.unchanged, report.created) == (stored, 120 - stored)
    assert report.embedded == 3 * (120 - stored)


def test_the_command_reports_what_sync_did(garden, capsys):
    (garden / "Orchard.md").unlink()
    (garden / "Hives" / "Clover.md").rename(garden / "Clover.md")
    call_command("import_garden", str(garden), "--no-progress")
    out = capsys.readouterr().out
    assert "Followed 1 moved or renamed note(s)" in out and "Retired 1 note(s) gone from the garden" in out


@pytest.mark.django_db(transaction=True)  # the watch syncs from a thread of its own, on its own connection
def test_watch_syncs_as_notes_change(tmp_path):
    folder = garden_write(tmp_path / "watched", {"Orchard.md": "The orchard has 146 trees."})
    garden_import([folder])
    reports: list[ImportReport] = []
    stop = threading.Event()
    watcher = threading.Thread(target=garden_watch, args=([folder], reports.append), kwargs={"stop": stop})
    watcher.start()
    try:
        time.sleep(0.5)  # the watch is set up
        garden_write(folder, {"Bees.md": "The apiary has four hives."})
        deadline = time.monotonic() + 60
        while not Article.objects.filter(path="Bees").exists():
            assert time.monotonic() < deadline, "the new note was never synced"
            time.sleep(0.2)
    finally:
        stop.set()
        watcher.join(10)
    assert reports and reports[-1].created == 1 and not watcher.is_alive()


def test_the_scheduled_sync_imports_the_configured_garden_one_at_a_time(tmp_path, settings):
    settings.GARDEN_PATH = ""
    assert garden_sync_configured() is None

    settings.GARDEN_PATH = str(
        garden_write(tmp_path / "configured", {"Orchard.md": "The orchard has 146 trees."})
    )
    with psycopg.connect(current_database_url(), autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [SYNC_LOCK])  # another worker's sync is running
        assert garden_sync_configured() is None
        # Released here, not by closing: a closed session's backend lets go of its locks a moment later.
        other.execute("SELECT pg_advisory_unlock(%s)", [SYNC_LOCK])
    report = garden_sync_configured()
    assert report is not None and report.created == 1 and Article.objects.filter(path="Orchard").exists()


def test_a_configured_garden_is_synced_on_celery_beats_schedule():
    command = "from django.conf import settings; print(settings.CELERY_BEAT_SCHEDULE['sync-garden'])"
    env = {**os.environ, "GARDEN_PATH": "/srv/garden", "GARDEN_SYNC_EVERY_SECONDS": "120"}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", command],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "'task': 'garden.tasks.sync_garden', 'schedule': 120.0" in result.stdout, result.stderr


def test_a_note_is_written_as_it_is_when_its_turn_comes(tmp_path):
    """A note's text is read again when it is written, not held from the first reading (an import holds the
    notes in flight, not the garden): one made private meanwhile is not written at all, one edited meanwhile
    is written as it is then, and the next sync brings the article level with its file."""
    folder = garden_write(
        tmp_path / "g",
        {
            "Secret.md": "The combination is 4471.",
            "Edited.md": "The orchard has 146 trees.",
            "Retitled.md": "# Old Mill\n\nThe mill grinds oats.",
            "Kept.md": note("K", 1),
        },
    )

    def meanwhile(passages: int) -> None:  # the passages are planned; nothing is written yet
        (folder / "Secret.md").write_text("---\nprivate: true\n---\nThe combination is 4471.\n")
        (folder / "Edited.md").write_text("The orchard has 152 trees.")
        (folder / "Retitled.md").write_text("# Water Mill\n\nThe mill grinds oats.")

    garden_import([folder], on_start=meanwhile)
    assert not Article.objects.filter(path="Secret").exists()
    assert not Passage.objects.filter(text__contains="4471").exists()
    assert "152 trees" in ArticleRevision.objects.get(article__path="Edited", superseded=False).body
    # Its title and the topic named by it are the text's as written, not the first reading's.
    assert Article.objects.get(path="Retitled").title == "Water Mill"
    assert (
        Topic.objects.filter(slug="water-mill").exists()
        and not Topic.objects.filter(slug="old-mill").exists()
    )
    assert Article.objects.filter(path="Kept").exists()

    again = garden_import([folder])
    assert again.private == 1 and not Article.objects.filter(path="Secret").exists()
    assert "152 trees" in ArticleRevision.objects.get(article__path="Edited", superseded=False).body
    assert garden_import([folder]).unchanged == 3  # level with the files now
