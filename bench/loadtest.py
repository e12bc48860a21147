"""`python -m bench.loadtest [--readers 50] [--seconds 60]`: concurrent readers against a local server.

It serves the site itself (gunicorn and a Celery worker, on 127.0.0.1 only), runs the readers for a bounded time
(each asks a golden question through `POST /api/ask`, then polls `GET /api/answers/{id}/verdict` until the verdict
is in), then waits for every answer it caused to be verified, and prints throughput and p50/p95 latency per
endpoint as JSON, with where an ask's time went (from the server's `Server-Timing` header: waiting for a web
worker, pre-flight, embedding, retrieval, synthesis, database, queueing) and where its verification's went
(waiting for a Celery worker, critic checks, judges). It fails when any request failed or any answer was left
unverified.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.management import call_command
from django.db.models import Sum

from bench import django_setup
from bench.timing import percentiles
from config.devstack import free_port
from config.workers import CeleryWorker
from garden.golden import golden_load
from providers.timing import parse_header

# The models are imported where they are used: `python -m bench.loadtest` runs this module before `main` sets
# Django up.

POLL_SECONDS = 1.0
ASK = "POST /api/ask"


class Recorder:
    """Latencies and failures per endpoint, shared by the reader threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.failures: dict[str, list[str]] = defaultdict(list)
        self.answer_ids: list[str] = []
        self.ask_phases: dict[str, list[float]] = defaultdict(list)
        self.asks: list[dict[str, Any]] = []  # every ask: when it began, how long it took, its phases

    def record(self, endpoint: str, seconds: float, failure: str = "") -> None:
        with self.lock:
            self.latencies[endpoint].append(seconds * 1000)
            if failure:
                self.failures[endpoint].append(failure)

    def record_phases(self, began: float, client_ms: float, server_timing: str) -> None:
        """An ask's phases as the server timed them, and the rest of what the reader waited (queued for a web
        worker, and the network) as `waiting`."""
        phases = parse_header(server_timing)
        total = phases.pop("total", 0.0)
        phases["waiting"] = max(0.0, client_ms - total)
        with self.lock:
            self.asks.append({"began": began, "ms": round(client_ms, 1), **phases})
            for name, ms in phases.items():
                self.ask_phases[name].append(ms)

    def report(self, elapsed: float) -> dict[str, Any]:
        endpoints = {}
        for endpoint, samples in sorted(self.latencies.items()):
            endpoints[endpoint] = {
                "requests": len(samples),
                "failed": len(self.failures[endpoint]),
                "per_second": round(len(samples) / elapsed, 2),
                **percentiles(samples, digits=1),
            }
        return endpoints


def phase_table(phases: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """p50/p95 per phase, the costliest at p95 first."""
    table = {name: percentiles(samples, digits=1) for name, samples in phases.items() if samples}
    return dict(sorted(table.items(), key=lambda item: -item[1]["p95_ms"]))


def verification_phases(answer_ids: list[str]) -> dict[str, dict[str, float]]:
    """Where the verifications of these answers spent their time: waiting for a Celery worker, the critic
    checks, and the judges (the rest of the run)."""
    from verifier.models import Verification, VerificationStatus  # see the note at the imports

    phases: dict[str, list[float]] = defaultdict(list)
    rows = Verification.objects.filter(
        answer__public_id__in=answer_ids, status=VerificationStatus.DONE, started_at__isnull=False
    ).annotate(critics_ms=Sum("findings__latency_ms"))
    for verification in rows:
        assert verification.started_at is not None
        critics = verification.critics_ms or 0.0
        phases["waiting"].append((verification.started_at - verification.created_at).total_seconds() * 1000)
        phases["critic checks"].append(critics)
        phases["judges"].append(max(0.0, verification.latency_ms - critics))
        phases["run"].append(float(verification.latency_ms))
    return phase_table(phases)


def _call(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any, str]:
    """One HTTP request; (status, parsed JSON body, its Server-Timing header). Connection problems raise
    OSError."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{base}{path}", data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            timing = response.headers.get("Server-Timing", "")
            return response.status, json.loads(response.read() or b"null"), timing
    except urllib.error.HTTPError as error:
        return error.code, None, ""


def _request(
    recorder: Recorder, endpoint: str, base: str, method: str, path: str, body: dict[str, Any] | None = None
) -> Any:
    """Make the request, record its latency (and failure); the JSON body on success, else None."""
    began = time.perf_counter()
    timing = ""
    try:
        status, payload, timing = _call(base, method, path, body)
        failure = "" if status == 200 else f"HTTP {status}"
    except OSError as error:
        payload, failure = None, type(error).__name__
    seconds = time.perf_counter() - began
    recorder.record(endpoint, seconds, failure)
    if endpoint == ASK and timing and not failure:
        recorder.record_phases(began, seconds * 1000, timing)
    return None if failure else payload


def _reader(base: str, questions: list[str], stop_at: float, recorder: Recorder, seed: int) -> None:
    rng = random.Random(seed)
    while time.monotonic() < stop_at:
        body = _request(recorder, ASK, base, "POST", "/api/ask", {"question": rng.choice(questions)})
        if body is None or body["refused"] or body["error"]:
            continue
        with recorder.lock:
            recorder.answer_ids.append(body["answer_id"])
        while time.monotonic() < stop_at:
            time.sleep(POLL_SECONDS)
            path = f"/api/answers/{body['answer_id']}/verdict"
            verdict = _request(recorder, "GET /api/answers/{id}/verdict", base, "GET", path)
            if verdict is None or verdict["status"] in {"done", "error"}:
                break


DESCRIPTION = (
    "Drive concurrent readers through ask and verdict polling against a local server; print figures."
)
NO_SERVER = "the server did not start; see .run/load-gunicorn.log"
FAILED = "{failed} request(s) failed and {unverified} answer(s) were left unverified."


def parser_build() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.loadtest", description=DESCRIPTION)
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--celery-workers", type=int, default=2)
    parser.add_argument("--drain-seconds", type=float, default=300.0, help="How long to wait for verdicts.")
    parser.add_argument("--prepare", action="store_true", help="Migrate and import the sample garden first.")
    parser.add_argument(
        "--keep-cache",
        action="store_true",
        help="Keep what the cache holds (e.g. source sentences' vectors from an earlier run); by default every "
        "run starts with an empty cache, as a first deployment does, so runs compare.",
    )
    return parser


def load_test(
    *,
    readers: int,
    seconds: float,
    web_workers: int,
    celery_workers: int,
    drain_seconds: float,
    prepare: bool,
    keep_cache: bool,
) -> tuple[dict[str, Any], str]:
    """Serve the site, run the readers, wait for the verdicts; the report, and what failed ('' when nothing)."""
    if prepare:
        call_command("migrate", "--noinput", verbosity=0)
        sample = Path(settings.BASE_DIR) / "garden" / "sample"
        call_command(
            "import_garden", "--history", str(sample / "earlier"), str(sample / "articles"), "--no-progress"
        )
    questions = [q.question for q in golden_load()]
    if not keep_cache:
        cache.clear()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # The readers all come from one address: lift the per-IP limit for the server this command starts.
    env = {
        **os.environ,
        "RATE_LIMIT_PER_IP": "1000000",
        "RATE_LIMIT_PER_USER": "1000000",
        "ANTHROPIC_API_KEY": "",
        "VERIFIER_MODE": "local",
        "DEBUG": "false",
    }
    logs = Path(settings.BASE_DIR) / ".run"
    logs.mkdir(exist_ok=True)
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "config.wsgi",
            "--config",
            "python:config.gunicorn",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(web_workers),
        ],
        env=env,
        stdout=(logs / "load-gunicorn.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    worker = CeleryWorker(
        hostname=f"load{port}@%h",
        concurrency=celery_workers,
        loglevel="WARNING",
        env=env,
        output=logs / "load-worker.log",
        grace=30,
    )
    worker.start()
    try:
        _wait_for(base)
        recorder = Recorder()
        began = time.monotonic()
        stop_at = began + seconds
        threads = [
            threading.Thread(target=_reader, args=(base, questions, stop_at, recorder, i))
            for i in range(readers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - began
        unfinished = _drain(recorder.answer_ids, drain_seconds)
    finally:
        server.terminate()
        worker.terminate()
        try:
            server.wait(30)
        finally:
            worker.stopped()
    endpoints = recorder.report(elapsed)
    # Every ask, for a closer look than percentiles give (e.g. whether the slow ones came together).
    (logs / "load-asks.json").write_text(json.dumps(sorted(recorder.asks, key=lambda a: a["began"])))
    report = {
        "readers": readers,
        "seconds": round(elapsed, 1),
        "endpoints": endpoints,
        "ask_phases": phase_table(recorder.ask_phases),
        "verification_phases": verification_phases(recorder.answer_ids),
        "answers": len(recorder.answer_ids),
        "verified": len(recorder.answer_ids) - len(unfinished),
        "unverified": len(unfinished),
    }
    failed = sum(e["failed"] for e in endpoints.values())
    problem = FAILED.format(failed=failed, unverified=len(unfinished)) if failed or unfinished else ""
    return report, problem


def _wait_for(base: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if _call(base, "GET", "/api/openapi.json")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(NO_SERVER)


def _drain(answer_ids: list[str], seconds: float) -> list[str]:
    """Wait until every answer's verification has finished; return those that did not."""
    from verifier.models import FINISHED, Verification  # see the note at the imports

    deadline = time.monotonic() + seconds
    while True:
        done = {
            str(public_id)
            for public_id in Verification.objects.filter(
                answer__public_id__in=answer_ids,
                status__in=FINISHED,
            ).values_list("answer__public_id", flat=True)
        }
        unfinished = [a for a in answer_ids if a not in done]
        if not unfinished or time.monotonic() > deadline:
            return unfinished
        time.sleep(1)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the report as JSON; exit 1, saying why, when a request failed or an answer was left unverified."""
    options = parser_build().parse_args(argv)
    django_setup()
    report, problem = load_test(**vars(options))
    print(json.dumps(report, indent=2))
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
