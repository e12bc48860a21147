"""A sync that writes many passages builds the vector index once after its writes, and the index is there again
however the sync ends: retrieval through the index finds what was written."""

from pathlib import Path

import pytest
from django.db import connection

from garden.answering.retrieval import vector_candidates
from garden.models import Passage
from garden.sync import garden_import, indexing
from garden.sync.indexing import VECTOR_INDEX, deferred, vector_index_exists
from providers.embeddings import embed
from tests.factories import garden_write
from tests.garden.test_sync import note

pytestmark = pytest.mark.django_db


def hives(folder: Path, count: int) -> Path:
    return garden_write(folder, {f"Hives/Hive {n}.md": note(f"Hive {n}", 1990 + n) for n in range(count)})


def index_definition() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_indexdef(%s::regclass)", [VECTOR_INDEX])
        return str(cursor.fetchone()[0])


def test_a_first_import_or_one_as_large_as_the_garden_defers_the_index_and_a_small_one_does_not():
    assert deferred(5_000, indexed=0) and deferred(5_000, indexed=9_000)
    assert not deferred(5_000, indexed=50_000)  # a tenth of a large garden: inserted as it goes
    assert not deferred(indexing.DEFERRED_FROM_PASSAGES - 1, indexed=0)  # a few passages: never worth a build


def test_a_large_write_goes_without_the_index_and_builds_it_again_as_the_model_declares(
    tmp_path, monkeypatch
):
    before = index_definition()
    monkeypatch.setattr(indexing, "DEFERRED_FROM_PASSAGES", 10)
    seen: list[bool] = []
    report = garden_import(
        [hives(tmp_path / "garden", 150)], on_progress=lambda done: seen.append(vector_index_exists())
    )
    assert report.passages >= 450 and seen and not any(seen)  # every group was written without the index
    assert index_definition() == before
    written = Passage.objects.get(is_current=True, article__title="Hive 7", ordinal=0)
    found = {passage for passage, _ in vector_candidates(embed([written.text])[0], 5)}
    assert written.pk in found


def test_a_small_write_keeps_the_index(tmp_path):
    seen: list[bool] = []
    garden_import(
        [hives(tmp_path / "garden", 3)], on_progress=lambda done: seen.append(vector_index_exists())
    )
    assert seen and all(seen)


def test_a_sync_that_fails_while_writing_leaves_the_index_built(tmp_path, monkeypatch):
    monkeypatch.setattr(indexing, "DEFERRED_FROM_PASSAGES", 10)

    def cut_off(done: int) -> None:
        raise KeyboardInterrupt  # Ctrl-C in `import_garden`, or the worker's time limit

    with pytest.raises(KeyboardInterrupt):
        garden_import([hives(tmp_path / "garden", 150)], on_progress=cut_off)
    assert vector_index_exists()


def test_a_sync_builds_the_index_that_a_killed_sync_left_dropped(tmp_path):
    folder = hives(tmp_path / "garden", 3)
    garden_import([folder])
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {VECTOR_INDEX}")  # as a sync killed between its writes leaves it
    report = garden_import([folder])  # nothing changed: nothing to write
    assert report.passages == 0 and vector_index_exists()
