"""Verify-all of the golden set on a real Celery worker of one process, then two: the wall time, where it went,
and the CPU time its processes used."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.core.cache import cache

from bench.timing import cpu_seconds
from config.workers import CeleryWorker, WorkerNotReady, workers_running
from evaluation.models import RunStatus, VerifyRun
from evaluation.starting import verify_run_start
from garden.golden import DEFAULT_FILE
from garden.sync import FanOutError, workers_find
from verifier.models import Verification


def golden_subset(count: int | None, golden_file: Path = DEFAULT_FILE) -> Path:
    """The golden set, or its first `count` questions taken from each category in turn (so a short run still
    asks every kind: facts, outdated notes, out of scope...), written beside the scratch files of the run."""
    if count is None:
        return golden_file
    entries = yaml.safe_load(golden_file.read_text(encoding="utf-8"))
    by_category: dict[str, list[Any]] = {}
    for entry in entries:
        by_category.setdefault(entry["category"], []).append(entry)
    chosen: list[Any] = []
    while len(chosen) < min(count, len(entries)):
        for members in by_category.values():
            if members and len(chosen) < count:
                chosen.append(members.pop(0))
    path = Path(tempfile.gettempdir()) / f"groundwork-bench-golden-{count}-{os.getpid()}.yaml"
    path.write_text(yaml.safe_dump(chosen, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


WORKER_READY_SECONDS = 180  # torch and the models load in the worker's main process before its pool forks


def _worker_ready(worker: CeleryWorker, prefix: str, processes: int) -> float:
    """Seconds until the worker answers with all its pool processes, the shared sentence vectors emptied.

    The clock starts then, not after a fixed sleep, which on a loaded machine started it while torch was still
    loading (docs/performance.md); and with the shared vectors emptied, the second run no longer finds
    the sentences the first embedded. Each run starts as cold as the other."""
    began = time.perf_counter()
    _shared_vectors_clear()

    def answers() -> bool:
        try:
            found = workers_find(timeout=1.0)
        except FanOutError:
            return False
        return any(name.startswith(prefix) for name in found.names) and found.processes >= processes

    try:
        worker.wait_until(answers, WORKER_READY_SECONDS - (time.perf_counter() - began), every=0)
    except WorkerNotReady as error:
        raise RuntimeError(
            f"the bench's Celery worker ({prefix}) did not answer within {WORKER_READY_SECONDS} s"
        ) from error
    return time.perf_counter() - began


def _shared_vectors_clear() -> None:
    """Forget the sentence vectors shared through the cache (`providers.embeddings.shared`), and only them."""
    client = cache._cache.get_client(write=True)  # type: ignore[attr-defined]
    for key in client.scan_iter(match="*embedding:*", count=1000):
        client.delete(key)


def run_phases(run: Any, seconds: float, workers: int) -> dict[str, Any]:
    """Where a Verify-all run's time went, per item, from what each item stored: retrieval (the question's
    embedding and the search), synthesis (the rest of the ask), judging (the critics and the judge: the
    verification's own latency) and storing (the rest of the item: the answer, the verification, the claims
    written). Medians and sums in seconds; `busy` is the items' summed time over the run's wall time and
    workers: 1.0 means every worker process was inside an item the whole run."""
    items = list(run.items.select_related("answer__question__retrieval").filter(answer__isnull=False))
    judged = dict(
        Verification.objects.filter(answer_id__in=[i.answer_id for i in items]).values_list(
            "answer_id", "latency_ms"
        )
    )
    phases: dict[str, list[float]] = {
        "retrieval": [],
        "synthesis": [],
        "judging": [],
        "storing": [],
        "item": [],
    }
    for item in items:
        answer = item.answer
        retrieval = answer.question.retrieval.latency_ms / 1000
        ask = answer.latency_ms / 1000
        judging = judged.get(answer.pk, 0) / 1000
        phases["retrieval"].append(retrieval)
        phases["synthesis"].append(max(0.0, ask - retrieval))
        phases["judging"].append(judging)
        phases["storing"].append(max(0.0, item.seconds - ask - judging))
        phases["item"].append(item.seconds)
    first_started = (
        min((item.answer.question.created_at for item in items), default=run.started_at) - run.started_at
    )
    return {
        # From the run's start to the first answer stored: queueing, and the first item's own work.
        "first_answer_after_s": round(first_started.total_seconds(), 2),
        "phases_median_s": {name: round(statistics.median(v), 3) for name, v in phases.items() if v},
        "phases_sum_s": {name: round(sum(v), 1) for name, v in phases.items()},
        "busy": round(sum(phases["item"]) / (seconds * workers), 2) if seconds else None,
    }


def bench_verify_all(
    database_url: str,
    concurrency: int,
    timeout: float = 900,
    niceness: int | None = None,
    golden_file: Path = DEFAULT_FILE,
) -> dict[str, Any]:
    """Wall time of a Verify-all of `golden_file` on a real Celery worker with `concurrency` processes (at
    `niceness`, else `WORKER_NICENESS`), where its time went (`run_phases`) and the CPU time its processes
    used: `cores_used` is that over the wall time, the cores the run had."""
    env = {**os.environ, "DATABASE_URL": database_url}
    if niceness is not None:
        env["WORKER_NICENESS"] = str(niceness)
    worker = CeleryWorker(
        hostname=f"bench{concurrency}@%h",
        concurrency=concurrency,
        loglevel="WARNING",
        gossip=False,
        mingle=False,
        env=env,
        output="discard",
        grace=30,
    )
    with workers_running([worker]):
        ready_seconds = _worker_ready(worker, f"bench{concurrency}@", concurrency)
        load_before = os.getloadavg()[0]
        cpu_before = cpu_seconds(worker.pid)
        began = time.perf_counter()
        run = verify_run_start(label=f"bench {concurrency} worker(s)", golden_file=golden_file)
        deadline = began + timeout
        while VerifyRun.objects.get(pk=run.pk).status == RunStatus.RUNNING and time.perf_counter() < deadline:
            time.sleep(0.2)
        seconds = time.perf_counter() - began
        cpu = cpu_seconds(worker.pid) - cpu_before
        finished = VerifyRun.objects.get(pk=run.pk)
        return {
            "workers": concurrency,
            "questions": finished.total,
            "seconds": round(seconds, 1),
            "finished": finished.status == RunStatus.DONE,
            "worker_ready_seconds": round(ready_seconds, 1),
            "niceness": int(env.get("WORKER_NICENESS", settings.WORKER_NICENESS)),
            "cpu_seconds": round(cpu, 1),
            "cores_used": round(cpu / seconds, 2) if seconds else None,
            "load_average_before_after": [round(load_before, 1), round(os.getloadavg()[0], 1)],
            **run_phases(finished, seconds, concurrency),
        }
