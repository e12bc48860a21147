"""The load test with a slow Claude (`python -m bench.loadtest --claude-delay`): what it reports, and a smoke run of
every configuration against the real site at its smallest size (docs/performance.md gives the full run)."""

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from django.conf import settings

from bench.loadtest import (
    ARTICLE,
    BASELINE,
    BOUNDED,
    CLAUDE_ASK,
    CLAUDE_BUSY,
    FAKE_ANSWER,
    HEALTH,
    REFUSAL,
    UNBOUNDED,
    VERDICT,
    Recorder,
    slow_claude,
    summary,
)
from config.database import current_database_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def test_the_summary_pools_the_requests_without_claude_and_counts_the_busy_share() -> None:
    recorder = Recorder()
    for endpoint, seconds in [(REFUSAL, 0.1), (ARTICLE, 0.2), (VERDICT, 0.3), (HEALTH, 0.4)]:
        recorder.record(endpoint, seconds)
    for _ in range(3):
        recorder.record(CLAUDE_ASK, 5.0)
    recorder.record(CLAUDE_BUSY, 0.01)
    figures = summary(recorder, elapsed=10.0)
    assert figures["without Claude"] == {"requests": 4, "p50_ms": 250.0, "p95_ms": 400.0}
    assert figures["Claude asks"] == {"answered": 3, "p50_ms": 5000.0, "p95_ms": 5000.0}
    assert figures["busy (503) share"] == 0.25  # one ask of four was told Claude is busy
    assert figures["endpoints"][CLAUDE_BUSY]["failed"] == 0  # a 503 with Retry-After is not a failure


def test_the_slow_claude_answers_after_its_delay_citing_a_source() -> None:
    import anthropic

    with slow_claude(0.5) as claude:
        client = anthropic.Anthropic(api_key="sk-ant-test-not-a-real-key-0000", base_url=claude.base_url)
        began = time.monotonic()
        message = client.messages.create(
            model="claude-fake", max_tokens=10, messages=[{"role": "user", "content": "Anything?"}]
        )
        waited = time.monotonic() - began
        assert claude.request_count == 1
    assert waited >= 0.5
    assert message.content[0].type == "text" and message.content[0].text == FAKE_ANSWER


@dataclass
class ScratchDatabase:
    """The load runs' database: its URL, and whether a run has migrated it and imported the sample garden."""

    url: str
    prepared: bool = False


@pytest.fixture(scope="module")
def scratch_database() -> Iterator[ScratchDatabase]:
    """A database of its own on the test server, shared by the module's load runs as `make load` shares one (the
    first run prepares it: migrates, imports the sample garden), dropped after."""
    url = urlsplit(current_database_url())
    name = f"{url.path.lstrip('/')}_load"
    admin = urlunsplit(url._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield ScratchDatabase(urlunsplit(url._replace(path=f"/{name}")))
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def load_run(database: ScratchDatabase, *options: str) -> dict[str, Any]:
    """`python -m bench.loadtest --smallest` with these options, as `make load` runs it: the development settings
    (Celery on Redis's database 0, apart from the test session's worker), in the scratch database, with `--prepare`
    the first time. Its report, once it has passed: no request failed, every answer was verified."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": database.url,
        "REDIS_URL": settings.REDIS_URL,
    }
    prepare = [] if database.prepared else ["--prepare"]
    done = subprocess.run(
        [sys.executable, "-m", "bench.loadtest", *prepare, "--smallest", *options],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{done.stderr[-3000:]}\n{done.stdout[-3000:]}"
    database.prepared = True
    return json.loads(done.stdout)


@pytest.mark.slow
# Both load runs use the development settings' Redis databases (0 and 1: the broker, and the cache its rate limits
# count in): one process runs them, one after the other. The bench's smoke run has databases of its own.
@pytest.mark.xdist_group("development_broker")
def test_the_smallest_run_with_a_slow_claude_measures_every_configuration(scratch_database):
    report = load_run(scratch_database)
    runs = {name: runs[0] for name, runs in report["configurations"].items()}
    assert list(runs) == [BASELINE, BOUNDED, UNBOUNDED]
    assert all(run["without Claude"]["requests"] > 0 for run in runs.values())
    assert runs[BASELINE]["Claude asks"]["answered"] == 0
    # Six readers ask Claude at once of one web process: its four slots turn some away, all eight threads none.
    assert runs[BOUNDED]["WEB_CLAUDE_SLOTS"] == 4 and runs[BOUNDED]["busy (503) share"] > 0
    assert runs[UNBOUNDED]["WEB_CLAUDE_SLOTS"] == 8 and runs[UNBOUNDED]["busy (503) share"] == 0
    assert runs[BOUNDED]["Claude asks"]["answered"] > 0 and runs[UNBOUNDED]["Claude asks"]["answered"] > 0
    assert report["verified"] == report["answers"] > 0


def test_the_streaming_fake_claude_writes_word_by_word_and_whole_answers_after_every_word() -> None:
    import anthropic

    from bench.stream_load import FAKE_WORDS, fake_claude

    claude, whole_after = fake_claude(0.3, 0.02)
    with claude:
        client = anthropic.Anthropic(api_key="sk-ant-test-not-a-real-key-0000", base_url=claude.base_url)
        asked: Any = {
            "model": "claude-fake",
            "max_tokens": 300,
            "messages": [{"role": "user", "content": "Any?"}],
        }
        began = time.monotonic()
        pieces = []
        for event in client.messages.create(**asked, stream=True):
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                pieces.append((time.monotonic() - began, event.delta.text))
        began = time.monotonic()
        whole = client.messages.create(**asked)
        waited = time.monotonic() - began
    first, _ = pieces[0]
    assert 0.3 <= first < whole_after <= pieces[-1][0] + 0.05 and "".join(t for _, t in pieces) == FAKE_WORDS
    assert waited >= whole_after and whole.content[0].type == "text" and whole.content[0].text == FAKE_WORDS


@pytest.mark.slow
@pytest.mark.xdist_group("development_broker")  # as the run above: on Redis's databases 0 and 1
def test_the_smallest_streamed_run_measures_first_words_beside_whole_answers_and_refusals(
    scratch_database,
):
    report = load_run(scratch_database, "--stream")
    sizes = report["configurations"]
    assert list(sizes) == ["1 reader", "10 readers"]
    for kinds in sizes.values():
        assert set(kinds) == {"refusal", "whole", "streamed"}
        assert all(runs[0]["asks"] > 0 and runs[0]["failed"] == 0 for runs in kinds.values())
        assert all(kinds[kind][0]["first_word"]["p50_ms"] > 0 for kind in ("streamed", "whole"))
    # One reader sees a streamed answer's first word before a whole answer's, which comes only when it is whole.
    alone = sizes["1 reader"]
    assert alone["streamed"][0]["first_word"]["p50_ms"] < alone["whole"][0]["first_word"]["p50_ms"]
    assert report["yardsticks"]["fake_first_token_ms"] > 0 and report["yardsticks"]["round_trip_ms"] > 0
    assert report["answers"] > 0 and report["unverified"] == 0
