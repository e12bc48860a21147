"""`import_garden --workers`: the Celery workers embed, the importing process writes; the same garden as an import
in one process, nothing embedded twice, and faults that lose nothing (a real worker, and a faulty one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.conf import settings

from config.database import current_database_url
from config.services import EmbeddedRedis, free_port
from garden.models import Article, ArticleRevision, Link, Passage
from garden.sync import fanout, garden_import, groups, workers_find
from garden.sync.embedding import REPORT_EVERY
from providers import embeddings
from providers.embeddings import EmbeddingBackend
from tests.celery_worker import Worker, wait_for
from tests.faulty_embedding_worker import FAULT, MARKER
from tests.garden.test_sync import note

VAULT = Path(settings.BASE_DIR) / "garden" / "sample" / "vault"


def test_vectors_travel_exactly_and_smaller_than_json_numbers():
    vectors = embeddings.embed(["The hives stand in the orchard.", "Cider is pressed in October."]).tolist()
    packed = fanout.vectors_pack(vectors)
    assert fanout.vectors_unpack(packed) == vectors
    assert len(packed) < len(json.dumps(vectors)) / 3


def test_a_worker_embeds_with_the_importers_backend_not_its_own(settings):
    texts = ["The hives stand in the orchard.", "Cider is pressed in October."]
    settings.EMBEDDING_BACKEND = "torch"  # the worker's own setting
    answer = fanout.batch_embed(texts, EmbeddingBackend.ONNX_INT8)
    vectors = np.asarray(fanout.vectors_unpack(answer["vectors"]))
    assert np.allclose(vectors, embeddings.embed(texts, backend=EmbeddingBackend.ONNX_INT8), atol=1e-6)
    assert not np.allclose(vectors, embeddings.embed(texts, backend=EmbeddingBackend.TORCH), atol=1e-3)


def garden_snapshot() -> dict[str, Any]:
    """What the vault's import stored: articles, current passages with their vectors, links."""
    slugs = list(Article.objects.filter(path__in=_vault_paths()).values_list("slug", flat=True))
    passages = Passage.objects.filter(article__slug__in=slugs, is_current=True).order_by(
        "article__slug", "ordinal"
    )
    return {
        "articles": sorted(Article.objects.filter(slug__in=slugs).values_list("slug", "title", "path")),
        "passages": [(c.article.slug, c.ordinal, c.text) for c in passages.select_related("article")],
        "vectors": np.asarray([np.asarray(c.embedding) for c in passages]),
        "links": sorted(
            Link.objects.filter(source__slug__in=slugs).values_list("source__slug", "target_slug")
        ),
    }


def _vault_paths() -> list[str]:
    return [p.relative_to(VAULT).with_suffix("").as_posix() for p in VAULT.rglob("*.md")]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)  # a real worker process
def test_a_workers_import_stores_what_an_import_in_one_process_does_and_a_rerun_embeds_nothing(
    celery_worker, monkeypatch
):
    monkeypatch.setattr(groups, "GROUP_PASSAGES", 32)  # several groups, more than the window holds
    garden_import([VAULT])
    alone = garden_snapshot()
    Article.objects.filter(path__in=_vault_paths()).delete()

    totals: list[int] = []
    counts: list[int] = []
    report = garden_import([VAULT], on_start=totals.append, on_progress=counts.append, workers=workers_find())
    fanned = garden_snapshot()

    assert report.failures == [] and report.created == len(alone["articles"]) > 30
    assert fanned["articles"] == alone["articles"] and fanned["links"] == alone["links"]
    assert fanned["passages"] == alone["passages"]
    assert report.passages == report.embedded == len(alone["passages"])
    # Embedded by a worker on one torch thread, beside this process's own threads: the same vectors.
    assert np.abs(fanned["vectors"] - alone["vectors"]).max() < 1e-5
    assert totals == [report.passages] and sum(counts) == report.passages
    assert len(counts) > 1  # the bar moved group by group, as the worker finished each

    again = garden_import([VAULT], workers=workers_find())
    assert (again.unchanged, again.created, again.embedded) == (report.created, 0, 0)
    assert ArticleRevision.objects.filter(article__path__in=_vault_paths()).count() == report.created


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_progress_bar_moves_with_each_batch_a_worker_finishes_before_the_group_is_back(celery_worker):
    counts: list[int] = []
    report = garden_import([VAULT], on_progress=counts.append, workers=workers_find())
    # One group of the vault's passages, encoded 64 at a time: the worker says so after each 64.
    assert report.passages > REPORT_EVERY
    assert counts[0] == REPORT_EVERY and sum(counts) == report.passages


def import_command(folder: Path, redis_url: str, *options: str) -> dict[str, Any]:
    """`manage.py import_garden FOLDER --workers` as a user runs it, on the test database and `redis_url`: the
    keyword arguments of a subprocess."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": current_database_url(),
        "REDIS_URL": redis_url,
    }
    command = ["manage.py", "import_garden", str(folder), "--workers", "--no-progress", *options]
    return {"args": [sys.executable, *command], "cwd": settings.BASE_DIR, "env": env, "text": True}


def import_garden(folder: Path, redis_url: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        **import_command(folder, redis_url, *options), capture_output=True, timeout=300, check=False
    )


def hives(folder: Path, count: int) -> Path:
    """`count` notes of three passages each, the last holding the passage a faulty worker breaks on."""
    folder.mkdir()
    for number in range(count):
        text = note(f"Hive {number}", 2000 + number)
        (folder / f"Note {number:03}.md").write_text(text + (f"\n\n{MARKER}" if number == count - 1 else ""))
    return folder


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_with_no_worker_answering_the_import_says_so_and_reads_nothing(own_redis, tmp_path):
    ran = import_garden(hives(tmp_path / "garden", 3), own_redis.url)
    assert ran.returncode == 1
    assert fanout.NO_WORKERS.format(seconds=fanout.REPLY_SECONDS) in ran.stderr
    assert not Article.objects.filter(path__startswith="Note ").exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_with_redis_away_the_import_says_so(tmp_path):
    ran = import_garden(hives(tmp_path / "garden", 3), f"redis://127.0.0.1:{free_port()}/0")
    assert ran.returncode == 1
    assert "The Celery broker does not answer (" in ran.stderr and "import without --workers" in ran.stderr
    assert not Article.objects.filter(path__startswith="Note ").exists()


# The import's own roll call, with up to 20 s for a worker to answer, from a process configured as the
# import's (`import_command`).
ROLL_CALL = (
    "import sys, django; django.setup(); from config.celery import app; "
    "sys.exit(0 if app.control.inspect(timeout=20, limit=1).stats() else 1)"
)


def _roll_call_answered(broker_url: str) -> bool:
    """Whether a worker on this broker answers the roll call an import makes (`workers_find`)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "REDIS_URL": broker_url}
    done = subprocess.run(
        [sys.executable, "-c", ROLL_CALL], cwd=settings.BASE_DIR, env=env, timeout=120, check=False
    )
    return done.returncode == 0


@pytest.fixture
def faulty_worker(own_redis: EmbeddedRedis, tmp_path: Path) -> Iterator[tuple[Worker, Path]]:
    """A worker on the test's own Redis that breaks on the marked passage while the returned file exists.

    A prefork worker, as in production: its main process answers an import's roll call while its pool process
    embeds. A solo worker answers only between tasks: a rerun started while it still ran a batch the failed import
    had sent could be told that no worker answered (as the test below was, once in CI, on a loaded machine).
    """
    fault = tmp_path / "fault"
    worker = Worker(
        {"REDIS_URL": own_redis.url, "GROUNDWORK_TEST_EMBED_FAULT": str(fault)},
        name="faulty",
        app="tests.faulty_embedding_worker:app",
        pool="prefork",
        own_session=True,  # kill() takes its pool process too, even one asleep in a hanging batch
    )
    # A prefork worker that had logged "ready." sometimes answered no roll call at all (in 2 of 4 fresh clones'
    # runs, once for 60 s), so the test's import found no worker: one that does not answer is started again.
    for _ in range(3):
        worker.start()
        if _roll_call_answered(own_redis.url):
            break
        worker.kill()
    else:
        pytest.fail("the faulty worker, started three times, answered no roll call")
    try:
        yield worker, fault
    finally:
        worker.kill()  # at once: a batch left hanging would hold up a warm shutdown


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_failed_batch_stops_the_import_after_the_groups_written_and_a_rerun_finishes_the_rest(
    own_redis, faulty_worker, tmp_path
):
    _, fault = faulty_worker
    fault.write_text("fail")
    folder = hives(tmp_path / "garden", 100)  # 300 passages or so: two groups, the marked note in the second

    failed = import_garden(folder, own_redis.url)
    stored = list(Article.objects.filter(path__startswith="Note "))
    kept = len(stored)
    assert failed.returncode == 1
    assert f"passages failed on a worker (OSError: {FAULT})." in failed.stderr
    assert f"{kept} note(s) were stored before it stopped; run the import again to resume." in failed.stderr
    assert 0 < kept < 100 and "Note 099" not in {article.path for article in stored}
    assert all(article.passages.count() == 3 for article in stored)  # none half-written

    fault.unlink()  # the worker is well again
    resumed = import_garden(folder, own_redis.url)
    assert resumed.returncode == 0, resumed.stderr
    assert f"Imported {100 - kept} new and 0 revised articles, {kept} unchanged" in resumed.stdout
    rest = Passage.objects.filter(article__path__startswith="Note ").exclude(article__in=stored).count()
    assert f"; {rest} passages in" in resumed.stdout  # only the notes not stored before were embedded
    revisions = ArticleRevision.objects.filter(article__path__startswith="Note ")
    assert revisions.count() == revisions.values("article").distinct().count() == 100  # none stored twice


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_batch_that_does_not_come_back_stops_the_import_when_its_time_is_up(
    own_redis, faulty_worker, tmp_path
):
    _, fault = faulty_worker
    fault.write_text("hang")
    ran = import_garden(hives(tmp_path / "garden", 2), own_redis.url, "--batch-timeout", "3")
    assert ran.returncode == 1
    assert "passages did not come back from the workers within 3s." in ran.stderr
    assert "0 note(s) were stored before it stopped; run the import again to resume." in ran.stderr
    assert not Article.objects.filter(path__startswith="Note ").exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_redis_going_away_mid_import_stops_it_at_once_saying_what_was_stored(
    own_redis, faulty_worker, tmp_path
):
    folder = hives(tmp_path / "garden", 300)  # 900 passages: four groups, time to stop Redis after the first
    running = subprocess.Popen(
        **import_command(folder, own_redis.url), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        wait_for(lambda: Article.objects.filter(path__startswith="Note ").exists(), seconds=300)
        own_redis.stop()
        stopped = time.monotonic()
        _, errors = running.communicate(timeout=120)
    finally:
        running.kill()
    kept = Article.objects.filter(path__startswith="Note ").count()
    # Celery's result consumer tries Redis again for a while (20 times), not for --batch-timeout's 450 s.
    assert running.returncode == 1 and time.monotonic() - stopped < 60
    assert "The Celery broker went away (" in errors
    assert f"{kept} note(s) were stored before it stopped; run the import again to resume." in errors
    assert 0 < kept < 300
