"""`python -m bench.loadtest [--readers 50] [--seconds 60]`: concurrent readers against a local server.

It serves the site itself (gunicorn and a Celery worker, on 127.0.0.1 only), runs the readers for a bounded time
(each asks a golden question through `POST /api/ask`, then polls `GET /api/answers/{id}/verdict` until the verdict
is in), then waits for every answer it caused to be verified, and prints throughput and p50/p95 latency per
endpoint as JSON, with where an ask's time went (from the server's `Server-Timing` header: waiting for a web
worker, pre-flight, embedding, retrieval, synthesis, database, queueing) and where its verification's went
(waiting for a Celery worker, critic checks, judges). It fails when any request failed or any answer was left
unverified.

With `--claude-delay SECONDS` it measures instead whether readers who need no Claude wait behind slow Claude
calls: see the section below and docs/performance.md ("Claude calls and web threads"). With `--stream`, streamed
answers beside whole ones and refusals (bench/stream_load.py; docs/performance.md, "Streamed answers").
"""

from __future__ import annotations

import argparse
import dataclasses
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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import cache
from django.core.management import call_command
from django.db.models import Sum

from bench import django_setup
from bench.timing import percentiles
from config.gunicorn import threads as WEB_THREADS
from config.services import free_port
from config.workers import CeleryWorker
from garden.golden import golden_load
from providers.timing import parse_header

if TYPE_CHECKING:
    from tests.fakes.messages_api import FakeMessagesAPI

# The models are imported where they are used: `python -m bench.loadtest` runs this module before `main` sets
# Django up.

POLL_SECONDS = 1.0
LOGS = Path(__file__).resolve().parent.parent / ".run"  # the logs of the server and worker it starts
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

    def fail(self, endpoint: str, failure: str) -> None:
        """A request that succeeded as HTTP but not as the run meant it (its latency is recorded already)."""
        with self.lock:
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


def _call(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any, Message]:
    """One HTTP request; (status, parsed JSON body or None for a page or an error, the response's headers).
    Connection problems raise OSError."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{base}{path}", data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            content = response.read()
            is_json = response.headers.get_content_type() == "application/json"
            return response.status, json.loads(content or b"null") if is_json else None, response.headers
    except urllib.error.HTTPError as error:
        return error.code, None, error.headers


def _request(
    recorder: Recorder, endpoint: str, base: str, method: str, path: str, body: dict[str, Any] | None = None
) -> Any:
    """Make the request, record its latency (and failure); the JSON body on success, else None."""
    began = time.perf_counter()
    timing = ""
    try:
        status, payload, headers = _call(base, method, path, body)
        timing = headers.get("Server-Timing", "")
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


# --- With a slow Claude: do readers who need no Claude wait for those who do? ---------------------------------
# Some readers ask questions the garden answers through Claude (a local fake of the Messages API that takes
# `--claude-delay` seconds an answer); the others make requests that need no Claude: a question it refuses, an
# article page, a verdict poll, /api/health. The same readers run against the server with the web threads that
# may wait on Claude bounded (`WEB_CLAUDE_SLOTS` as deployed), unbounded (every thread may), and with no Claude
# asks at all (the baseline those readers' latencies are compared to).

CLAUDE_ASK = "POST /api/ask (Claude)"
CLAUDE_BUSY = "POST /api/ask (Claude busy: 503)"
REFUSAL = "POST /api/ask (refused)"
ARTICLE = "GET /articles/{slug}/"
VERDICT = "GET /api/answers/{id}/verdict"
HEALTH = "GET /api/health"
WITHOUT_CLAUDE = (REFUSAL, ARTICLE, VERDICT, HEALTH)
NOT_REFUSED = "a question the garden should refuse was answered"
NOT_CLAUDE = "answered by {generator}, not Claude"
BASELINE, BOUNDED, UNBOUNDED = "no Claude asks", "bounded", "unbounded"
FAKE_ANSWER = "The garden's first source says so [1]."


def configurations(slots: int, threads: int) -> dict[str, int | None]:
    """`WEB_CLAUDE_SLOTS` per configuration: the bound `slots`, every one of a process's `threads`, and None for
    the baseline, which has no Claude asks."""
    return {BASELINE: None, BOUNDED: slots, UNBOUNDED: threads}


def slow_claude(delay: float) -> FakeMessagesAPI:
    """A local fake of the Messages API (tests/fakes) that answers every call after `delay` seconds, citing
    source 1: the server never reaches the real API."""
    from tests.fakes.messages_api import FakeMessagesAPI, reply_text

    return FakeMessagesAPI(default=dataclasses.replace(reply_text(FAKE_ANSWER), delay_seconds=delay))


@dataclass(frozen=True)
class Work:
    """What the readers ask and read: questions the garden answers (through Claude), questions it refuses, and
    article pages. The answers whose verdicts they poll are those of the run so far, in the recorder."""

    answerable: list[str]
    refused: list[str]
    articles: list[str]


def work_load() -> Work:
    from garden.models import Article  # see the note at the imports

    golden = golden_load()
    articles = [article.get_absolute_url() for article in Article.objects.live().order_by("pk")[:50]]
    return Work(
        answerable=[q.question for q in golden if q.in_scope and q.category != "adversarial"],
        refused=[q.question for q in golden if not q.in_scope],
        articles=articles,
    )


def _claude_reader(base: str, work: Work, stop_at: float, recorder: Recorder, seed: int) -> None:
    """Ask questions Claude answers, one after another; told Claude is busy, wait as the server asks."""
    rng = random.Random(seed)
    while time.monotonic() < stop_at:
        began = time.perf_counter()
        try:
            status, body, headers = _call(base, "POST", "/api/ask", {"question": rng.choice(work.answerable)})
        except OSError as error:
            recorder.record(CLAUDE_ASK, time.perf_counter() - began, type(error).__name__)
            continue
        seconds = time.perf_counter() - began
        if status == 503:
            recorder.record(CLAUDE_BUSY, seconds)
            time.sleep(max(0.0, min(float(headers.get("Retry-After") or 1), stop_at - time.monotonic())))
        elif status != 200:
            recorder.record(CLAUDE_ASK, seconds, f"HTTP {status}")
        elif body["refused"]:
            recorder.record(REFUSAL, seconds)  # nothing in the garden for it: no Claude call
        else:
            failure = "" if body["generator"] == "claude" else NOT_CLAUDE.format(generator=body["generator"])
            recorder.record(CLAUDE_ASK, seconds, failure or body["error"] or "")
            with recorder.lock:
                recorder.answer_ids.append(body["answer_id"])


def _plain_reader(base: str, work: Work, stop_at: float, recorder: Recorder, seed: int) -> None:
    """Requests that need no Claude, one a second: a refused question, an article, a verdict, the health."""
    rng = random.Random(seed)
    while time.monotonic() < stop_at:
        kind = rng.choice(WITHOUT_CLAUDE)
        if kind == REFUSAL:
            body = _request(
                recorder, REFUSAL, base, "POST", "/api/ask", {"question": rng.choice(work.refused)}
            )
            if body is not None and not body["refused"]:
                recorder.fail(REFUSAL, NOT_REFUSED)
        elif kind == ARTICLE:
            _request(recorder, ARTICLE, base, "GET", rng.choice(work.articles))
        elif kind == VERDICT and recorder.answer_ids:
            with recorder.lock:
                answer_id = rng.choice(recorder.answer_ids)
            _request(recorder, VERDICT, base, "GET", f"/api/answers/{answer_id}/verdict")
        else:
            _request(recorder, HEALTH, base, "GET", "/api/health")
        time.sleep(POLL_SECONDS)


def summary(recorder: Recorder, elapsed: float) -> dict[str, Any]:
    """The figures that settle it: p50/p95 of the requests that need no Claude (together), of the Claude asks,
    and the share of Claude asks told Claude is busy; then each endpoint's."""
    without = [ms for endpoint in WITHOUT_CLAUDE for ms in recorder.latencies.get(endpoint, [])]
    asks = recorder.latencies.get(CLAUDE_ASK, [])
    busy = len(recorder.latencies.get(CLAUDE_BUSY, []))
    return {
        "without Claude": {"requests": len(without), **(percentiles(without, digits=1) if without else {})},
        "Claude asks": {"answered": len(asks), **(percentiles(asks, digits=1) if asks else {})},
        "busy (503) share": round(busy / (busy + len(asks)), 3) if busy + len(asks) else 0.0,
        "endpoints": recorder.report(elapsed),
    }


def claude_load_test(
    *,
    readers: int,
    claude_readers: int,
    claude_delay: float,
    seconds: float,
    rounds: int,
    slots: int,
    web_workers: int,
    web_threads: int,
    celery_workers: int,
    drain_seconds: float,
) -> tuple[dict[str, Any], str]:
    """Each configuration in turn (`rounds` times, alternating), a server of its own, the same readers; the
    answers each caused verified before the next begins. The report, and what failed ('' when nothing)."""
    work = work_load()
    results: dict[str, list[dict[str, Any]]] = defaultdict(list)
    answer_ids: list[str] = []
    unverified: list[str] = []
    with slow_claude(claude_delay) as claude:
        env = {
            **_server_env(),
            "ANTHROPIC_API_KEY": "sk-ant-load-test-fake-0000",
            "ANTHROPIC_BASE_URL": claude.base_url,
        }
        with _celery(env, celery_workers):
            for _ in range(rounds):
                for name, bound in configurations(slots, web_threads).items():
                    phase_env = {**env, "WEB_CLAUDE_SLOTS": str(bound or slots)}
                    with _serving(phase_env, web_workers, web_threads) as base:
                        warmed = _warm_up(base, work, web_workers * web_threads, ask=not answer_ids)
                        polled = [*answer_ids[-50:], *warmed]  # answers to poll from the start
                        recorder = Recorder()
                        recorder.answer_ids.extend(polled)
                        # The baseline: the same readers who need no Claude, and none asking it.
                        asking = [_claude_reader] * (0 if bound is None else claude_readers)
                        elapsed = _run_readers(
                            [*asking, *[_plain_reader] * (readers - claude_readers)],
                            base,
                            work,
                            seconds,
                            recorder,
                        )
                    new = [*warmed, *recorder.answer_ids[len(polled) :]]
                    answer_ids.extend(new)
                    unverified.extend(_drain(new, drain_seconds))
                    results[name].append({"WEB_CLAUDE_SLOTS": bound, **summary(recorder, elapsed)})
    report = {
        "readers": readers,
        "claude_readers": claude_readers,
        "claude_delay_seconds": claude_delay,
        "seconds": seconds,
        "web_workers": web_workers,
        "threads_per_worker": web_threads,
        "configurations": dict(results),
        "answers": len(answer_ids),
        "verified": len(answer_ids) - len(unverified),
        "unverified": len(unverified),
    }
    failed = sum(e["failed"] for runs in results.values() for run in runs for e in run["endpoints"].values())
    problem = FAILED.format(failed=failed, unverified=len(unverified)) if failed or unverified else ""
    return report, problem


def _warm_up(base: str, work: Work, threads: int, *, ask: bool) -> list[str]:
    """What a server's threads do first (a refused question, an article), not measured; with `ask`, also a
    question for Claude from each thread, so that verdict polls have answers from the start. Their answer ids."""
    answered: list[str] = []

    def warm(number: int) -> None:
        try:
            _call(base, "POST", "/api/ask", {"question": work.refused[number % len(work.refused)]})
            _call(base, "GET", work.articles[number % len(work.articles)])
            if ask:
                question = work.answerable[number % len(work.answerable)]
                status, body, _ = _call(base, "POST", "/api/ask", {"question": question})
                if status == 200 and not body["refused"]:
                    answered.append(body["answer_id"])
        except OSError:
            pass

    threads_ = [threading.Thread(target=warm, args=(n,)) for n in range(threads)]
    for thread in threads_:
        thread.start()
    for thread in threads_:
        thread.join()
    return answered


def _run_readers(targets: Sequence[Any], base: str, work: Any, seconds: float, recorder: Recorder) -> float:
    """Run one reader thread for each target until `seconds` have passed; the seconds they took."""
    began = time.monotonic()
    stop_at = began + seconds
    threads = [
        threading.Thread(target=target, args=(base, work, stop_at, recorder, i))
        for i, target in enumerate(targets)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - began


DESCRIPTION = (
    "Drive concurrent readers through ask and verdict polling against a local server; print figures."
)
NO_SERVER = "the server did not start; see .run/load-gunicorn.log"
FAILED = "{failed} request(s) failed and {unverified} answer(s) were left unverified."
# `--smallest`: a smoke run of every configuration in seconds, not minutes (each still starts its own server).
SMALLEST = {
    "readers": 10,
    "claude_readers": 6,
    "seconds": 2.0,
    "claude_delay": 1.0,
    "web_workers": 1,
    "celery_workers": 1,
}


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
    parser.add_argument(
        "--claude-delay",
        type=float,
        default=0.0,
        help="Seconds a local fake of Claude takes an answer: with it, some readers ask Claude (the rest need no "
        "Claude), against WEB_CLAUDE_SLOTS bounded, unbounded and no Claude asks, each --seconds long.",
    )
    parser.add_argument("--claude-readers", type=int, default=12, help="Of the readers, those asking Claude.")
    parser.add_argument(
        "--slots",
        type=int,
        default=4,
        help="WEB_CLAUDE_SLOTS of the bounded configuration (the setting's default).",
    )
    parser.add_argument(
        "--threads", type=int, default=WEB_THREADS, help="Threads of each web process (config/gunicorn.py's)."
    )
    parser.add_argument("--rounds", type=int, default=1, help="Times each configuration runs, alternating.")
    parser.add_argument(
        "--stream",
        action="store_true",
        help="Streamed answers beside whole ones and refusals, with 1 and --readers readers: time to the first "
        "word, the whole answer and the finished verdict, and asks a second (bench/stream_load.py).",
    )
    parser.add_argument(
        "--first-token",
        type=float,
        default=0.5,
        help="With --stream: seconds the fake Claude takes its first word.",
    )
    parser.add_argument(
        "--word-seconds",
        type=float,
        default=0.05,
        help="With --stream: seconds the fake Claude takes each next word.",
    )
    parser.add_argument(
        "--smallest", action="store_true", help=f"A smoke run of the Claude configurations: {SMALLEST}."
    )
    return parser


def load_test(
    *,
    readers: int,
    seconds: float,
    web_workers: int,
    celery_workers: int,
    drain_seconds: float,
) -> tuple[dict[str, Any], str]:
    """Serve the site, run the readers, wait for the verdicts; the report, and what failed ('' when nothing)."""
    questions = [q.question for q in golden_load()]
    recorder = Recorder()
    env = _server_env()
    with _celery(env, celery_workers), _serving(env, web_workers) as base:
        elapsed = _run_readers([_reader] * readers, base, questions, seconds, recorder)
        unfinished = _drain(recorder.answer_ids, drain_seconds)
    endpoints = recorder.report(elapsed)
    # Every ask, for a closer look than percentiles give (e.g. whether the slow ones came together).
    (LOGS / "load-asks.json").write_text(json.dumps(sorted(recorder.asks, key=lambda a: a["began"])))
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


def _server_env() -> dict[str, str]:
    """The environment of the server and worker this command starts: the readers all come from one address, so
    the rate limits are lifted; no key (the local synthesiser answers) and the local judge."""
    return {
        **os.environ,
        "RATE_LIMIT_PER_IP": "1000000",
        "RATE_LIMIT_PER_USER": "1000000",
        "ANTHROPIC_API_KEY": "",
        "VERIFIER_MODE": "local",
        "DEBUG": "false",
        # With a (fake) key: the readers are anonymous, and no day's budget may turn Claude's answers local.
        "ANONYMOUS_CLAUDE_DAILY_USD": "1000000",
        "VERIFIER_DAILY_BUDGET_USD": "1000000",
    }


@contextmanager
def _celery(env: dict[str, str], concurrency: int) -> Iterator[None]:
    LOGS.mkdir(exist_ok=True)
    worker = CeleryWorker(
        hostname=f"load{os.getpid()}@%h",
        concurrency=concurrency,
        loglevel="WARNING",
        env=env,
        output=LOGS / "load-worker.log",
        grace=30,
    )
    worker.start()
    try:
        yield
    finally:
        worker.terminate()
        worker.stopped()


@contextmanager
def _serving(env: dict[str, str], web_workers: int, threads: int = WEB_THREADS) -> Iterator[str]:
    """gunicorn on a free port of 127.0.0.1 while the block runs; its base URL, once it answers."""
    LOGS.mkdir(exist_ok=True)
    port = free_port()
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
            "--threads",
            str(threads),
        ],
        env=env,
        stdout=(LOGS / "load-gunicorn.log").open("ab"),
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for(base)
        yield base
    finally:
        server.terminate()
        server.wait(30)


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
    if options.smallest:
        for name, value in SMALLEST.items():
            setattr(options, name, value)
    django_setup()
    if options.prepare:
        call_command("migrate", "--noinput", verbosity=0)
        sample = Path(settings.BASE_DIR) / "garden" / "sample"
        # What the import says goes to stderr: stdout is the report alone, as JSON.
        call_command(
            "import_garden",
            "--history",
            str(sample / "earlier"),
            str(sample / "articles"),
            "--no-progress",
            stdout=sys.stderr,
        )
    if not options.keep_cache:
        cache.clear()
    sizes = {"web_workers": options.web_workers, "celery_workers": options.celery_workers}
    common = {"readers": options.readers, "seconds": options.seconds, "drain_seconds": options.drain_seconds}
    if options.stream:
        from bench.stream_load import stream_load_test

        report, problem = stream_load_test(
            **common,
            **sizes,
            first_token=options.first_token,
            word_seconds=options.word_seconds,
            web_threads=options.threads,
            rounds=options.rounds,
        )
    elif options.claude_delay > 0:
        report, problem = claude_load_test(
            **common,
            **sizes,
            claude_readers=options.claude_readers,
            claude_delay=options.claude_delay,
            rounds=options.rounds,
            slots=options.slots,
            web_threads=options.threads,
        )
    else:
        report, problem = load_test(**common, **sizes)
    print(json.dumps(report, indent=2))
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
