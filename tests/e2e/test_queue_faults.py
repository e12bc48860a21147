"""Faults of the queue: a worker killed in the middle of a verification, and Redis stopped while readers ask.

Each test runs its own Redis (so stopping it disturbs no other test), with gunicorn and Celery workers pointed
at it and at the test database, and a fake Messages API as the Claude juror.
"""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from claimcheck.judges.claude import TOOL_NAME
from config.services import EmbeddedRedis
from garden.models import Article
from garden.services import revision_create
from tests.celery_worker import Worker, wait_for
from tests.e2e.conftest import Site
from tests.fakes.messages_api import Behaviour, FakeMessagesAPI, delay, reply_tool
from verifier.models import Claim, Verification, VerificationStatus, Vote

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Transactional tests start from an empty database: these tests bring the one article their questions need.
ARTICLE = (
    "Ashcombe station reopened to passengers on 3 May 1981, when the first public train of the preserved "
    "railway left for Millbridge. The railway is standard gauge, 1,435 mm between the rails. Ashcombe "
    "signal box is maintained by the volunteers of the signalling team, who meet every Tuesday."
)
QUESTIONS = [
    "When did Ashcombe station reopen?",
    "What gauge is the railway?",
    "Who maintains Ashcombe signal box?",
]


@pytest.fixture(autouse=True)
def ashcombe_article() -> None:
    article = Article.objects.create(slug="ashcombe-queue-faults", title="Ashcombe station")
    revision_create(article=article, title="Ashcombe station", body=ARTICLE)


# These tests ask as a visitor; the workers give visitors an allowance of Claude (none by default), so that the
# juror a worker is killed while waiting on is called at all.
VISITORS_JUDGED_BY_CLAUDE = {"ANONYMOUS_CLAUDE_DAILY_USD": "1.0"}


def unverified_verdicts(body: dict[str, Any]) -> Behaviour:
    """The fake juror: every claim it is sent comes back unverified (what it says does not matter here)."""
    text = body["messages"][0]["content"][0]["text"]
    numbers = [int(n) for n in re.findall(r'<claim number="(\d+)"', text)]
    verdicts = [
        {
            "claim_number": n,
            "status": "unverified",
            "quote": "",
            "source_number": None,
            "confidence": 0.9,
            "flags": ["not-in-sources"],
        }
        for n in numbers
    ]
    reply = {"verdicts": verdicts, "answers_question": True}  # a juror given the question must say
    return reply_tool(TOOL_NAME, reply, input_tokens=500, output_tokens=50)


def post_json(url: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    began = time.monotonic()
    with urllib.request.urlopen(request, timeout=60) as response:
        return int(response.status), json.loads(response.read()), time.monotonic() - began


def get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode())


def status_of(answer_id: str) -> str:
    return str(Verification.objects.get(answer__public_id=answer_id).status)


def assert_verified_once(answer_id: str) -> None:
    """Done, with one set of claims and one vote per judge per claim: nothing was stored twice."""
    verification = Verification.objects.get(answer__public_id=answer_id)
    assert verification.status == VerificationStatus.DONE, verification.error
    claims = Claim.objects.filter(verification=verification)
    ordinals = list(claims.values_list("ordinal", flat=True))
    assert ordinals and sorted(ordinals) == list(range(len(ordinals)))
    for claim in claims.filter(is_claim=True):
        judges = list(Vote.objects.filter(claim=claim).values_list("judge", "role"))
        assert len(judges) == len(set(judges)), judges


@pytest.fixture
def hanging_juror(fake_messages_api: FakeMessagesAPI) -> FakeMessagesAPI:
    """The Claude juror's first call hangs (a worker is killed while it waits, mid-verification); later calls
    are answered."""
    fake_messages_api.enqueue(delay(120))
    fake_messages_api.set_default(unverified_verdicts)
    return fake_messages_api


def ask_until_judging(site: Site, juror: FakeMessagesAPI) -> str:
    """Ask a question; return its answer's id once its verification is running and waiting on the juror."""
    code, asked, _ = post_json(f"{site.url}/api/ask", {"question": QUESTIONS[0]})
    assert code == 200 and not asked["refused"]
    answer_id = str(asked["answer_id"])
    wait_for(lambda: juror.request_count == 1 and status_of(answer_id) == "running")
    return answer_id


def juror_calls(juror: FakeMessagesAPI) -> int:
    return [r["body"]["model"] for r in juror.requests].count(settings.CLAUDE_JUROR_MODEL)


def test_a_worker_killed_mid_verification_is_redelivered_and_the_answer_verified_once(
    own_redis: EmbeddedRedis, hanging_juror: FakeMessagesAPI
) -> None:
    # The site answers with the extractive synthesiser; only the workers' judge panel has a (fake) Claude.
    site_env = {"REDIS_URL": own_redis.url}
    worker_env = {
        **site_env,
        **VISITORS_JUDGED_BY_CLAUDE,
        "GROUNDWORK_TEST_FAKE_CLAUDE_URL": hanging_juror.base_url,
        "CELERY_VISIBILITY_TIMEOUT": "5",  # how long an unacknowledged task waits before it is handed out again
    }
    site = Site(site_env, name="worker-fault").start()
    doomed = Worker(worker_env, name="doomed")
    successor = Worker(worker_env, name="successor")
    try:
        doomed.start()
        answer_id = ask_until_judging(site, hanging_juror)

        doomed.kill()
        assert status_of(answer_id) == "running"  # left half-done, its task never acknowledged
        [task_id] = re.findall(r"verify_answer\[([0-9a-f-]+)\] received", doomed.log.read_text())
        successor.start()
        wait_for(lambda: status_of(answer_id) == "done", seconds=240)
        verdict = json.loads(get_text(f"{site.url}/api/answers/{answer_id}/verdict"))
    finally:
        successor.stop()
        doomed.stop()
        site.stop()

    # The very task the killed worker held was handed to its successor, which finished it.
    assert f"verify_answer[{task_id}] succeeded" in successor.log.read_text()
    assert_verified_once(answer_id)
    verification = Verification.objects.get(answer__public_id=answer_id)
    assert verification.attempts == 2  # the killed run, then the redelivered one
    # The killed run's call, then the successor's: the juror was not asked again after the verdict was stored.
    assert juror_calls(hanging_juror) == 2
    judges = set(Vote.objects.filter(claim__verification=verification).values_list("judge", flat=True))
    assert {"local", settings.CLAUDE_JUROR_MODEL} <= judges
    assert verdict["status"] == "done"


def test_a_pool_process_killed_mid_verification_is_replaced_at_once_even_when_loading_the_model_is_slow(
    own_redis: EmbeddedRedis, hanging_juror: FakeMessagesAPI
) -> None:
    """`make run`'s worker uses a prefork pool: when a pool process dies (say, the OOM killer), the worker
    gives its unacknowledged task back to the queue (reject_on_worker_lost) and a new pool process runs it.

    Loading the model takes 10 s here, as on a machine whose disk cache is cold: longer than the 4 s the pool
    gives a new process to report that it is up. The replacement must not have to load it again."""
    site_env = {"REDIS_URL": own_redis.url}
    site = Site(site_env, name="pool-fault").start()
    worker = Worker(
        {**site_env, **VISITORS_JUDGED_BY_CLAUDE, "GROUNDWORK_TEST_FAKE_CLAUDE_URL": hanging_juror.base_url},
        name="pool",
        pool="prefork",
        app="tests.slow_model_worker:app",
    )
    try:
        worker.start()
        answer_id = ask_until_judging(site, hanging_juror)

        [killed] = worker.pool_processes()
        os.kill(killed, signal.SIGKILL)
        wait_for(lambda: status_of(answer_id) == "done", seconds=240)
        [replacement] = worker.pool_processes()
        # Later answers are verified too, by the same replacement.
        _, later, _ = post_json(f"{site.url}/api/ask", {"question": QUESTIONS[1]})
        wait_for(lambda: status_of(later["answer_id"]) == "done", seconds=180)
        survivors = worker.pool_processes()
    finally:
        worker.stop()
        site.stop()

    log = worker.log.read_text()
    assert "WorkerLostError" in log
    assert "Timed out waiting for UP message" not in log
    assert replacement != killed and survivors == [replacement]
    assert_verified_once(answer_id)
    assert Verification.objects.get(answer__public_id=answer_id).attempts == 2
    assert_verified_once(later["answer_id"])
    assert Verification.objects.get(answer__public_id=later["answer_id"]).attempts == 1
    assert juror_calls(hanging_juror) == 3  # the killed run, its redelivery, the later answer


def test_with_redis_stopped_readers_still_get_answers_and_every_one_is_verified_once_redis_is_back(
    own_redis: EmbeddedRedis, tmp_path: Path
) -> None:
    env = {
        "REDIS_URL": own_redis.url,
        # Celery beat (in the worker, as `make run` runs it) looks for waiting verifications every 2 s.
        "VERIFIER_REQUEUE_EVERY_SECONDS": "2",
        "VERIFIER_REQUEUE_AFTER_SECONDS": "1",
        "CELERY_BEAT_SCHEDULE_FILENAME": str(tmp_path / "celerybeat-schedule"),
    }
    site = Site(env, name="redis-fault").start()
    worker = Worker(env, name="redis-fault", beat=True)
    try:
        worker.start()
        warm = [post_json(f"{site.url}/api/ask", {"question": QUESTIONS[0]}) for _ in range(4)]
        wait_for(lambda: all(status_of(asked["answer_id"]) == "done" for _, asked, _ in warm))
        usual = statistics.median(seconds for _, _, seconds in warm[1:])  # both gunicorn workers warmed up
        own_redis.stop()

        answer_ids, waits = [], []
        for question in QUESTIONS * 2:
            code, asked, seconds = post_json(f"{site.url}/api/ask", {"question": question})
            assert code == 200 and not asked["refused"] and asked["answer"]
            answer_ids.append(asked["answer_id"])
            waits.append(seconds)
        # Answers are not held up waiting for the broker (it was ~19 s each, then ~2 s of connection retries):
        # within a few times the usual answer's time measured in this run, so a busy machine moves both.
        assert statistics.median(waits) < 3 * usual + 1.0, (waits, usual)
        page = get_text(f"{site.url}/answers/{answer_ids[0]}/")
        assert "Waiting for the judge" in page
        assert json.loads(get_text(f"{site.url}/api/answers/{answer_ids[0]}/verdict"))["status"] == "pending"
        time.sleep(3)  # beat ticks while the broker is away: nothing is lost by that either
        assert {status_of(answer_id) for answer_id in answer_ids} == {"pending"}

        own_redis.start()
        wait_for(lambda: all(status_of(answer_id) == "done" for answer_id in answer_ids), seconds=240)
        page = get_text(f"{site.url}/answers/{answer_ids[0]}/")
    finally:
        worker.stop()
        site.stop()

    assert "Waiting for the judge" not in page and "Verification" in page
    for answer_id in answer_ids:
        assert_verified_once(answer_id)
        assert Verification.objects.get(answer__public_id=answer_id).attempts == 1
