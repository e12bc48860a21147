"""`python -m bench.loadtest --stream`: readers who watch answers stream, beside readers who wait for them whole.

One server (gunicorn and a Celery worker on 127.0.0.1, as `make load` starts them) and a local fake of the
Messages API (tests/fakes) that writes every answer in `FAKE_WORDS` words, its first after `--first-token`
seconds and each next after `--word-seconds`: streamed when asked to stream, else whole once the last word is
written. Then, in turn, 1 reader and `--readers` readers, each for `--seconds`:

- `refusal`: questions the garden refuses, streamed (one event, no Claude): the floor;
- `whole`: `POST /api/ask` as before, the answer whole when Claude has written it all;
- `streamed`: `POST /api/ask` with `stream: true`, the words as Claude writes them.

Each reader asks, reads the answer, polls its verdict until the judge is done, and asks again (asks a second
count the asks begun in `--seconds`). With `--rounds`, every other round runs streamed before whole. For each, the time
to the first word (a streamed answer's first `delta`; a whole answer's response), to the whole answer and to the
finished verdict, p50 and p95, beside their yardsticks: the fake's first token and whole answer, and the
database's `SELECT 1` round trip measured in the same run (each figure also in round trips); and the asks a second.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.core.cache import cache

from bench.timing import percentiles
from bench.yardstick import machine, round_trip_ms

FAKE_WORDS = (
    "The garden's first source says so [1]. It gives the length, the year it opened and who built it, and it "
    "says which railway it carried until the line closed [1]. Nothing else in the garden says otherwise."
)
REFUSAL, WHOLE, STREAMED = "refusal", "whole", "streamed"
KINDS = (REFUSAL, WHOLE, STREAMED)
# The bench's streaming section (`python -m bench --only streaming`), as `make load` runs it.
STREAM_READERS, STREAM_SECONDS = 50, 20.0
POLL_SECONDS = 0.5  # between verdict polls: finer than a judge's run, coarse enough not to load the server
TIMEOUT_SECONDS = 120


@dataclass
class Timings:
    """One configuration's samples (milliseconds) and counts, shared by its reader threads."""

    first_word: list[float] = field(default_factory=list)
    answer: list[float] = field(default_factory=list)
    verdict: list[float] = field(default_factory=list)
    asks: int = 0
    busy: int = 0
    failures: list[str] = field(default_factory=list)
    answer_ids: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def fake_claude(first_token: float, word_seconds: float) -> Any:
    """The fake Messages API: streamed answers word by word, whole ones after the time all their words take."""
    from tests.fakes.messages_api import FakeMessagesAPI, delay, reply_text, stream_words, streamed

    whole_after = first_token + word_seconds * (len(stream_words(FAKE_WORDS)) - 1)

    def respond(body: dict[str, Any]) -> Any:
        if body.get("stream"):
            return streamed(FAKE_WORDS, first_word_seconds=first_token, word_seconds=word_seconds)
        return delay(whole_after, reply_text(FAKE_WORDS))

    return FakeMessagesAPI(default=respond), whole_after


def _ask(base: str, question: str, *, stream: bool) -> tuple[int, dict[str, Any] | None, float, float, str]:
    """One ask: (status, the answer, ms to the first word, ms to the whole answer, Retry-After)."""
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=TIMEOUT_SECONDS)
    began = time.perf_counter()
    try:
        body = json.dumps({"question": question, "stream": stream})
        connection.request("POST", "/api/ask", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            response.read()
            return response.status, None, 0.0, 0.0, response.getheader("Retry-After") or "1"
        if not stream:
            answer = json.loads(response.read())
            ms = (time.perf_counter() - began) * 1000
            return 200, answer, ms, ms, ""
        first = 0.0
        event = ""
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event == "delta" and not first:
                first = (time.perf_counter() - began) * 1000
            elif line.startswith("data: ") and event in {"answer", "error"}:
                whole = (time.perf_counter() - began) * 1000
                return 200, json.loads(line.removeprefix("data: ")), first or whole, whole, ""
        return 599, None, 0.0, 0.0, ""
    finally:
        connection.close()


def _verdict_ms(base: str, answer_id: str, began: float, stop_at: float) -> float | None:
    """Poll the answer's verdict until the judge is done; ms since `began`, None if the run ended first."""
    url = urlsplit(base)
    while time.monotonic() < stop_at + TIMEOUT_SECONDS:
        connection = http.client.HTTPConnection(
            url.hostname or "127.0.0.1", url.port, timeout=TIMEOUT_SECONDS
        )
        try:
            connection.request("GET", f"/api/answers/{answer_id}/verdict")
            response = connection.getresponse()
            verdict = json.loads(response.read()) if response.status == 200 else {}
        finally:
            connection.close()
        if verdict.get("status") in {"done", "error"}:
            return (time.perf_counter() - began) * 1000
        time.sleep(POLL_SECONDS)
    return None


def _reader(base: str, kind: str, questions: list[str], stop_at: float, timings: Timings, seed: int) -> None:
    rng = random.Random(seed)
    while time.monotonic() < stop_at:
        began = time.perf_counter()
        try:
            status, answer, first, whole, retry = _ask(base, rng.choice(questions), stream=kind != WHOLE)
        except OSError as error:
            with timings.lock:
                timings.failures.append(type(error).__name__)
            continue
        if status == 503:
            with timings.lock:
                timings.busy += 1
            time.sleep(max(0.0, min(float(retry), stop_at - time.monotonic())))
            continue
        if answer is None or answer.get("error"):
            with timings.lock:
                timings.failures.append(f"HTTP {status}: {answer and answer.get('error')}")
            continue
        if kind != REFUSAL and answer.get("refused"):
            continue  # nothing in the garden for it: not what this configuration measures
        with timings.lock:
            timings.asks += 1
            timings.first_word.append(first)
            timings.answer.append(whole)
        if kind == REFUSAL:
            continue
        with timings.lock:
            timings.answer_ids.append(answer["answer_id"])
        verdict = _verdict_ms(base, answer["answer_id"], began, stop_at)
        with timings.lock:
            if verdict is None:
                timings.failures.append("the verdict did not come")
            else:
                timings.verdict.append(verdict)


def _run(base: str, kind: str, questions: list[str], count: int, seconds: float) -> Timings:
    """`count` readers of one kind asking for `seconds` (each then finishes its last ask and verdict)."""
    timings = Timings()
    stop_at = time.monotonic() + seconds
    threads = [
        threading.Thread(target=_reader, args=(base, kind, questions, stop_at, timings, i))
        for i in range(count)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return timings


def _summary(timings: Timings, seconds: float, round_trip: float) -> dict[str, Any]:
    """One configuration's figures; asks a second over the time in which asks began."""
    return {
        "asks": timings.asks,
        "asks_per_second": round(timings.asks / seconds, 2),
        "busy_503": timings.busy,
        "failed": len(timings.failures),
        "first_word": _figures(timings.first_word, round_trip),
        "whole_answer": _figures(timings.answer, round_trip),
        "finished_verdict": _figures(timings.verdict, round_trip),
        "failures": sorted(set(timings.failures))[:5],
    }


def _figures(samples: list[float], round_trip: float) -> dict[str, float]:
    if not samples:
        return {}
    figures = percentiles(samples, digits=1)
    return {
        **figures,
        "p50_round_trips": round(figures["p50_ms"] / round_trip),
        "p95_round_trips": round(figures["p95_ms"] / round_trip),
    }


def stream_load_test(
    *,
    readers: int,
    seconds: float,
    first_token: float,
    word_seconds: float,
    web_workers: int,
    web_threads: int,
    celery_workers: int,
    drain_seconds: float,
    rounds: int = 1,
    database_url: str | None = None,
) -> tuple[dict[str, Any], str]:
    """Serve the site with the fake Claude, run each configuration with 1 and `readers` readers, `rounds` times;
    the report (each configuration's figures, a round each), and what failed ('' when nothing). The server and
    worker use `database_url` when given (the bench's scratch database), else the environment's."""
    from bench.loadtest import FAILED, _celery, _drain, _server_env, _serving, _warm_up, work_load

    work = work_load()
    questions = {REFUSAL: work.refused, WHOLE: work.answerable, STREAMED: work.answerable}
    round_trip = round_trip_ms()
    results: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    answer_ids: list[str] = []
    failed = 0
    claude, whole_after = fake_claude(first_token, word_seconds)
    with claude:
        env = {
            **_server_env(),
            "ANTHROPIC_API_KEY": "sk-ant-load-test-fake-0000",
            "ANTHROPIC_BASE_URL": claude.base_url,
            # Every thread may wait on Claude: what a stream holds is the measure here, not the slots' bound.
            "WEB_CLAUDE_SLOTS": str(web_threads),
            **({"DATABASE_URL": database_url} if database_url else {}),
        }
        with _celery(env, celery_workers), _serving(env, web_workers, web_threads) as base:
            _warm_up(base, work, web_workers * web_threads, ask=False)
            for round_ in range(rounds):
                # Every other round the other order, so that neither kind always runs on the warmer server.
                kinds = KINDS if round_ % 2 == 0 else (REFUSAL, STREAMED, WHOLE)
                for count in sorted({1, readers}):
                    for kind in kinds:
                        timings = _run(base, kind, questions[kind], count, seconds)
                        failed += len(timings.failures)
                        answer_ids.extend(timings.answer_ids)
                        size = f"{count} reader{'s' if count > 1 else ''}"
                        results[size].setdefault(kind, []).append(_summary(timings, seconds, round_trip))
        unverified = _drain(answer_ids, drain_seconds)
    report = {
        "readers": readers,
        "seconds": seconds,
        "rounds": rounds,
        "web_workers": web_workers,
        "threads_per_worker": web_threads,
        "yardsticks": {
            "fake_first_token_ms": round(first_token * 1000, 1),
            "fake_whole_answer_ms": round(whole_after * 1000, 1),
            "round_trip_ms": round(round_trip, 3),
        },
        "machine": machine(),
        "configurations": dict(results),
        "answers": len(answer_ids),
        "unverified": len(unverified),
    }
    problem = FAILED.format(failed=failed, unverified=len(unverified)) if failed or unverified else ""
    return report, problem


class StreamLoadError(Exception):
    """The bench's streaming section failed: a request failed or an answer was left unverified."""


def bench_streaming(
    database_url: str, readers: int, seconds: float, *, servers: Sequence[int] | None = None
) -> dict[str, Any]:
    """`python -m bench`'s streaming section: the streamed load of `make load` (`stream_load_test`, the load
    test's fake, and its server: `servers`, web processes and Celery workers, else the load test's defaults)
    with 1 and `readers` readers for `seconds` each, in the bench's scratch database; and each size's time to
    first word, p50 and p95, streamed, whole and refused, over the fake's first token (the floor a streamed
    answer cannot beat; a refusal asks no Claude). StreamLoadError when a request failed or an answer was left
    unverified."""
    from bench.loadtest import parser_build

    defaults = parser_build().parse_args([])
    web_workers, celery_workers = servers or (defaults.web_workers, defaults.celery_workers)
    cache.clear()  # as `make load` starts: no answer or vector of an earlier run served from the cache
    report, problem = stream_load_test(
        readers=readers,
        seconds=seconds,
        first_token=defaults.first_token,
        word_seconds=defaults.word_seconds,
        web_workers=web_workers,
        web_threads=defaults.threads,
        celery_workers=celery_workers,
        drain_seconds=defaults.drain_seconds,
        database_url=database_url,
    )
    if problem:
        raise StreamLoadError(problem)
    first_token = report["yardsticks"]["fake_first_token_ms"]
    report["first_word_over_fake_first_token"] = {
        size: {
            kind: {
                f"{tail}_ratio": round(runs[0]["first_word"][f"{tail}_ms"] / first_token, 2)
                for tail in ("p50", "p95")
            }
            for kind, runs in kinds.items()
            if runs[0]["first_word"]
        }
        for size, kinds in report["configurations"].items()
    }
    return report
