"""`python manage.py loadtest [--readers 50] [--seconds 60]`: concurrent readers against a local server.

It serves the site itself (gunicorn and a Celery worker, on 127.0.0.1 only), runs the readers for a bounded time
(each asks a golden question through `POST /api/ask`, then polls `GET /api/answers/{id}/verdict` until the verdict
is in), then waits for every answer it caused to be verified, and prints throughput and p50/p95 latency per
endpoint as JSON. It fails when any request failed or any answer was left unverified.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.devstack import free_port
from garden.golden import golden_load
from verifier.models import Verification, VerificationStatus

POLL_SECONDS = 1.0


class Recorder:
    """Latencies and failures per endpoint, shared by the reader threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.failures: dict[str, list[str]] = defaultdict(list)
        self.answer_ids: list[int] = []

    def record(self, endpoint: str, seconds: float, failure: str = "") -> None:
        with self.lock:
            self.latencies[endpoint].append(seconds * 1000)
            if failure:
                self.failures[endpoint].append(failure)

    def report(self, elapsed: float) -> dict[str, Any]:
        endpoints = {}
        for endpoint, samples in sorted(self.latencies.items()):
            ordered = sorted(samples)
            endpoints[endpoint] = {
                "requests": len(ordered),
                "failed": len(self.failures[endpoint]),
                "per_second": round(len(ordered) / elapsed, 2),
                "p50_ms": round(statistics.median(ordered), 1),
                "p95_ms": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 1),
            }
        return endpoints


def _call(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """One HTTP request; (status, parsed JSON body). Connection problems raise OSError."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{base}{path}", data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, None


def _timed(
    recorder: Recorder, endpoint: str, base: str, method: str, path: str, body: dict[str, Any] | None = None
) -> Any:
    """Make the request, record its latency (and failure); the JSON body on success, else None."""
    began = time.perf_counter()
    try:
        status, payload = _call(base, method, path, body)
        failure = "" if status == 200 else f"HTTP {status}"
    except OSError as error:
        payload, failure = None, type(error).__name__
    recorder.record(endpoint, time.perf_counter() - began, failure)
    return None if failure else payload


def _reader(base: str, questions: list[str], stop_at: float, recorder: Recorder, seed: int) -> None:
    rng = random.Random(seed)
    while time.monotonic() < stop_at:
        body = _timed(
            recorder, "POST /api/ask", base, "POST", "/api/ask", {"question": rng.choice(questions)}
        )
        if body is None or body["refused"] or body["error"]:
            continue
        with recorder.lock:
            recorder.answer_ids.append(body["answer_id"])
        while time.monotonic() < stop_at:
            time.sleep(POLL_SECONDS)
            path = f"/api/answers/{body['answer_id']}/verdict"
            verdict = _timed(recorder, "GET /api/answers/{id}/verdict", base, "GET", path)
            if verdict is None or verdict["status"] in {"done", "error"}:
                break


class Command(BaseCommand):
    help = "Drive concurrent readers through ask and verdict polling against a local server; print figures."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--readers", type=int, default=50)
        parser.add_argument("--seconds", type=float, default=60.0)
        parser.add_argument("--web-workers", type=int, default=4)
        parser.add_argument("--celery-workers", type=int, default=2)
        parser.add_argument(
            "--drain-seconds", type=float, default=300.0, help="How long to wait for verdicts."
        )
        parser.add_argument(
            "--prepare", action="store_true", help="Migrate and import the sample garden first."
        )

    def handle(
        self,
        *args: Any,
        readers: int,
        seconds: float,
        web_workers: int,
        celery_workers: int,
        drain_seconds: float,
        prepare: bool,
        **options: Any,
    ) -> None:
        if prepare:
            call_command("migrate", "--noinput", verbosity=0)
            sample = Path(settings.BASE_DIR) / "garden" / "sample"
            call_command("import_garden", str(sample / "earlier"), str(sample / "articles"), "--no-progress")
        questions = [q.question for q in golden_load()]
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
        bin_dir = Path(sys.executable).parent
        logs = Path(settings.BASE_DIR) / ".run"
        logs.mkdir(exist_ok=True)
        server = subprocess.Popen(
            [
                str(bin_dir / "gunicorn"),
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
        worker = subprocess.Popen(
            [
                str(bin_dir / "celery"),
                "-A",
                "config",
                "worker",
                "--concurrency",
                str(celery_workers),
                "--loglevel",
                "WARNING",
                "--hostname",
                f"load{port}@%h",
            ],
            env=env,
            stdout=(logs / "load-worker.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
        try:
            self._wait_for(base)
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
            unfinished = self._drain(recorder.answer_ids, drain_seconds)
        finally:
            for process in (server, worker):
                process.terminate()
            for process in (server, worker):
                process.wait(30)
        endpoints = recorder.report(elapsed)
        report = {
            "readers": readers,
            "seconds": round(elapsed, 1),
            "endpoints": endpoints,
            "answers": len(recorder.answer_ids),
            "verified": len(recorder.answer_ids) - len(unfinished),
            "unverified": len(unfinished),
        }
        self.stdout.write(json.dumps(report, indent=2))
        failed = sum(e["failed"] for e in endpoints.values())
        if failed or unfinished:
            raise CommandError(
                f"{failed} request(s) failed and {len(unfinished)} answer(s) were left unverified."
            )

    def _wait_for(self, base: str) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if _call(base, "GET", "/api/openapi.json")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise CommandError("the server did not start; see .run/load-gunicorn.log")

    def _drain(self, answer_ids: list[int], seconds: float) -> list[int]:
        """Wait until every answer's verification has finished; return those that did not."""
        deadline = time.monotonic() + seconds
        while True:
            done = set(
                Verification.objects.filter(
                    answer_id__in=answer_ids, status__in=[VerificationStatus.DONE, VerificationStatus.ERROR]
                ).values_list("answer_id", flat=True)
            )
            unfinished = [a for a in answer_ids if a not in done]
            if not unfinished or time.monotonic() > deadline:
                return unfinished
            time.sleep(1)
