"""Import throughput: the sample garden, a large generated garden beside the model's own encode of its passages,
and an import fanned out to one and then two Celery workers."""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import tempfile
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings

from bench.overhead import Overhead, encode_alone, garden_passages, in_encoder_runs
from config.workers import CeleryWorker, WorkerNotReady, workers_running, workers_wait
from garden.models import Article
from garden.sync import FanOutError, ImportReport, Workers, garden_import, workers_find
from providers import embeddings


def bench_import(folders: Sequence[Path], history: Sequence[Path] = ()) -> dict[str, Any]:
    report = garden_import(folders, history=history)
    return {
        "articles": report.created + report.revised,
        "passages": report.passages,
        "seconds": round(report.seconds, 2),
        "passages_per_second": round(report.passages_per_second, 1),
    }


GENERATED_WORDS = [
    "hive",
    "frame",
    "queen",
    "brood",
    "nectar",
    "pollen",
    "orchard",
    "graft",
    "rootstock",
    "blossom",
    "harvest",
    "cider",
    "press",
    "bramble",
    "clover",
    "hedge",
    "fence",
    "gate",
    "path",
    "shed",
    "ladder",
    "basket",
    "crate",
    "label",
    "jar",
    "honey",
    "wax",
    "smoker",
    "veil",
    "glove",
    "apple",
    "pear",
    "plum",
    "quince",
]


def generate_garden(folder: Path, count: int, seed: int = 7) -> Path:
    """`count` notes as a kept garden has them: ten folders, no front matter on every other note, tags, links
    to other notes (and one missing), about 500 characters each."""
    rng = random.Random(seed)
    for number in range(count):
        words = [" ".join(rng.choice(GENERATED_WORDS) for _ in range(12)) for _ in range(4)]
        head = (
            ""
            if number % 2
            else f"---\naliases: [note {number}]\ntags: [generated, batch-{number % 7}]\n---\n"
        )
        path = folder / f"Folder {number % 10}" / f"Note {number:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"{head}# Note {number}\n\nItem {number} was recorded in {1900 + number % 120}: {words[0]}. "
            f"{words[1]} #generated\n\nSee [[Note {(number * 7) % count:04d}]] and [[Missing {number % 3}]]. "
            f"{words[2]}. {words[3]}.\n",
            encoding="utf-8",
        )
    return folder


def bench_large_garden(count: int, runs: int = 1) -> dict[str, Any]:
    """First imports of `count` generated notes beside the embedding model's own encode of the same passages,
    `runs` pairs of them, the import first in even runs and the encode first in odd ones, each timed between
    two measurements of the encoder yardstick (`bench.overhead`): the import's overhead beyond the model is the
    ratio of two figures measured together, in encoder runs, with its spread over the runs. Then a re-import
    of the unchanged garden."""
    pairs = Overhead()
    passages: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = generate_garden(Path(scratch) / "garden", count)
        embeddings.load()
        first: ImportReport | None = None
        again: ImportReport | None = None
        for run in range(runs):
            for step in ("import", "encode") if run % 2 == 0 else ("encode", "import"):
                if step == "encode":
                    pairs.encodes.append(in_encoder_runs(partial(encode_alone, passages)))
                    continue
                imported = in_encoder_runs(partial(garden_import, [folder]))
                pairs.imports.append(imported)
                report = imported.result
                if first is None:
                    first, passages = report, garden_passages(folder)
                    again = garden_import([folder])
                # Gone again, for the next run, and so the retrieval figures that follow are measured on the
                # same garden as before.
                Article.objects.filter(garden=str(folder.resolve())).delete()
    assert first is not None and again is not None
    imported_seconds = statistics.median(run.seconds for run in pairs.imports)
    return {
        "notes": count,
        "runs": runs,
        "passages": first.passages,
        "first_import_seconds": round(imported_seconds, 1),
        "passages_per_second": round(first.passages / imported_seconds, 1),
        "import_embedding_seconds": round(first.embed_seconds, 1),
        **pairs.figures("", first.passages),
        "reimport_unchanged_seconds": round(again.seconds, 1),
        "reimport_embedded": again.embedded,
    }


# Notes of the garden whose import is fanned out: about a thousand passages, long enough that a worker's first
# batch (its warm-up) hardly counts, short enough for three imports on a shared machine.
DISTRIBUTED_NOTES = 1000
WORKERS_START_SECONDS = 120  # a worker process loads torch and the model before it answers


@contextlib.contextmanager
def _fanout_workers(count: int, database_url: str) -> Iterator[Workers]:
    """`count` Celery workers of one process each (`--concurrency 1`, as `docker compose up --scale worker=N`
    would run them), once all of them, and no others, answer; stopped on the way out."""
    logs = Path(settings.BASE_DIR) / ".run"
    prefix = f"bench-fanout-{os.getpid()}-{count}"
    started = [
        CeleryWorker(
            hostname=f"{prefix}-{number}@%h",
            concurrency=1,
            loglevel="WARNING",
            gossip=False,
            mingle=False,
            env={**os.environ, "DATABASE_URL": database_url},
            output=logs / f"bench-fanout-worker-{number}.log",
            grace=30,
        )
        for number in range(count)
    ]
    answered = Workers(names=(), processes=0)

    def all_answer() -> bool:
        nonlocal answered
        try:
            answered = workers_find(timeout=1.0)
        except FanOutError:
            answered = Workers(names=(), processes=0)
        others = [name for name in answered.names if not name.startswith(prefix)]
        if others:
            raise RuntimeError(f"other Celery workers answer on this broker and would take batches: {others}")
        return len(answered.names) == count

    with workers_running(started):
        try:
            workers_wait(started, all_answer, WORKERS_START_SECONDS, every=0)
        except WorkerNotReady as error:
            raise RuntimeError(
                f"the bench's Celery workers did not start; see {logs}/bench-fanout-worker-*.log"
            ) from error
        yield answered


def _import_figures(folder: Path, scratch: str, workers: Workers | None) -> dict[str, Any]:
    """A first import of `folder` (in this process, or fanned out to `workers`), then its articles deleted."""
    report = garden_import([folder], workers=workers)
    Article.objects.filter(revisions__source_path__startswith=scratch).delete()
    return {
        "passages": report.passages,
        "seconds": round(report.seconds, 1),
        "passages_per_second": round(report.passages_per_second, 1),
        "embed_seconds": round(report.embed_seconds, 1),
        "write_seconds": round(report.write_seconds, 1),
    }


def bench_distributed_import(database_url: str, count: int = DISTRIBUTED_NOTES) -> dict[str, Any]:
    """The first import of `count` generated notes, as `import_garden --workers` runs it, against one Celery
    worker process, then two (started here, stopped after), beside the same import in this process. passages/s
    is the whole import's: reading, planning and writing here, embedding there; embed_seconds is summed over
    the batches (over the workers' processes), write_seconds is this process's writing."""
    results: dict[str, Any] = {"notes": count, "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as scratch:
        folder = generate_garden(Path(scratch) / "garden", count)
        embeddings.load()  # this process's model is loaded before its import is timed, as the workers' are
        results["in_process"] = _import_figures(folder, scratch, None)
        for count_workers, key in ((1, "one_worker"), (2, "two_workers")):
            with _fanout_workers(count_workers, database_url) as workers:
                results[key] = {"workers": count_workers, **_import_figures(folder, scratch, workers)}
    one, two = results["one_worker"]["passages_per_second"], results["two_workers"]["passages_per_second"]
    results["two_over_one"] = round(two / one, 2) if one else None
    return results
