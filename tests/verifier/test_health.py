"""Operators see, in words, when verifications are held up: Redis away, no worker, or workers that take tasks
and never finish them; on `/api/health` and on the logs page."""

import datetime
import time
from unittest import mock

import pytest
import redis
from django.conf import settings as django_settings
from django.db import OperationalError, connection
from django.utils import timezone
from django.utils.html import escape

from config.services import free_port
from tests.celery_worker import wait_for
from tests.factories import answer_for, login, page_text
from verifier.health import (
    DATABASE_DOWN,
    NO_WORKER,
    REDIS_DOWN,
    SEEN_WITHIN_SECONDS,
    WORKERS_KEY,
    Heartbeat,
    health_check,
    heartbeat,
    workers_seen,
)
from verifier.models import Verification, VerificationStatus
from verifier.queueing import verification_create

pytestmark = pytest.mark.django_db

SUITE_BROKER = django_settings.CELERY_BROKER_URL


@pytest.fixture(autouse=True)
def own_redis_database(settings):
    """A Redis database of these tests' own: the suite's real worker beats into the usual one."""
    settings.CELERY_BROKER_URL = settings.TEST_REDIS_SCRATCH_URL
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.delete(WORKERS_KEY)
    yield client
    client.delete(WORKERS_KEY)


def waiting_for(minutes: float, status: str = VerificationStatus.PENDING) -> Verification:
    """A verification that has waited `minutes` for the judge."""
    verification = verification_create(answer=answer_for("The viaduct has 19 arches [1]."))
    assert verification is not None
    created = timezone.now() - datetime.timedelta(minutes=minutes)
    Verification.objects.filter(pk=verification.pk).update(created_at=created, status=status)
    return verification


def stuck_message(health) -> str:
    [message] = [p for p in health.problems if p.startswith("Verifications are stuck")]
    return message


def test_a_worker_that_beat_within_the_minute_is_seen_and_one_gone_quiet_is_not(own_redis_database):
    heartbeat("alive@host")
    seconds, _ = own_redis_database.time()
    own_redis_database.zadd(WORKERS_KEY, {"quiet@host": seconds - SEEN_WITHIN_SECONDS - 5})

    assert workers_seen() == ["alive@host"]


def test_the_heartbeat_thread_beats_at_once_and_is_gone_when_stopped():
    beating = Heartbeat("threaded@host")
    beating.start()
    deadline = time.monotonic() + 30
    while workers_seen() != ["threaded@host"]:
        assert time.monotonic() < deadline, "the heartbeat never reached Redis"
        time.sleep(0.05)
    beating.stop()
    assert workers_seen() == []
    assert not beating.is_alive()


def test_all_well_is_ok_with_no_problem():
    heartbeat("w1@host")
    waiting_for(minutes=0.1)

    health = health_check()

    assert (health.status, health.problems) == ("ok", [])
    assert health.workers == ["w1@host"] and health.waiting == 1 and health.stuck == 0


def test_verifications_waiting_past_the_requeue_window_with_a_worker_connected_are_called_stuck():
    heartbeat("w1@host")
    waiting_for(minutes=5)
    waiting_for(minutes=3, status=VerificationStatus.RUNNING)
    waiting_for(minutes=0.1)  # recent: not stuck

    health = health_check()

    assert health.status == "degraded"
    assert (health.waiting, health.stuck) == (3, 2)
    assert health.oldest_waiting is not None and health.oldest_waiting >= datetime.timedelta(minutes=5)
    assert health.oldest_waiting_words == "5 minutes"
    assert stuck_message(health) == (
        "Verifications are stuck: 2 waited more than 2 minutes for the judge although workers are connected "
        "(1 seen in the last minute). They take tasks but do not finish them; look at their logs."
    )


def test_with_no_worker_the_wait_is_blamed_on_the_missing_worker_not_a_stuck_one():
    waiting_for(minutes=5)

    health = health_check()

    assert health.problems == [NO_WORKER]
    assert health.status == "degraded" and health.stuck == 1


def test_redis_away_is_said_and_nothing_breaks(settings):
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{free_port()}/0"

    health = health_check()

    assert health.problems == [REDIS_DOWN]
    assert (health.status, health.redis, health.workers) == ("degraded", False, [])


def test_the_database_away_is_down():
    heartbeat("w1@host")
    with mock.patch.object(connection, "cursor", side_effect=OperationalError("connection refused")):
        health = health_check()

    assert health.problems == [DATABASE_DOWN]
    assert health.status == "down"


def test_the_health_endpoint_reports_each_part_in_words(client):
    heartbeat("w1@host")
    waiting_for(minutes=4)

    response = client.get("/api/health")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert (body["database"], body["redis"], body["workers_seen"]) == ("ok", "ok", 1)
    assert (body["waiting"], body["stuck"]) == (1, 1)
    assert 4 * 60 <= body["oldest_waiting_seconds"] < 5 * 60
    assert body["problems"][0].startswith("Verifications are stuck: 1 waited more than 2 minutes")


def test_the_health_endpoint_is_503_when_the_database_is_away(client):
    with mock.patch.object(connection, "cursor", side_effect=OperationalError("connection refused")):
        response = client.get("/api/health")

    assert response.status_code == 503
    assert response.json()["status"] == "down" and DATABASE_DOWN in response.json()["problems"]


def test_the_health_endpoint_when_all_is_well(client):
    heartbeat("w1@host")

    body = client.get("/api/health").json()

    assert body["status"] == "ok" and body["problems"] == [] and body["oldest_waiting_seconds"] is None


def test_the_logs_page_says_when_workers_are_stuck(client):
    heartbeat("pool-1@host")
    waiting_for(minutes=6)
    login(client, "operator")

    html = page_text(client.get("/operators/logs/").content.decode())

    assert "Verifications: degraded" in html
    assert escape(stuck_message(health_check())) in html
    assert "Workers seen in the last minute: 1 (pool-1@host)" in html
    assert "Waiting for the judge: 1, the oldest for 6 minutes." in html


def test_the_logs_page_says_when_all_is_well(client):
    heartbeat("pool-1@host")
    login(client, "operator")

    html = client.get("/operators/logs/").content.decode()

    assert "Verifications: working" in html and "Problem:" not in html
    assert "Waiting for the judge: 0." in html


@pytest.mark.slow  # starts a real worker process
def test_a_real_worker_is_seen(celery_worker, settings):
    settings.CELERY_BROKER_URL = SUITE_BROKER  # where the suite's worker beats
    wait_for(lambda: any(name.startswith("test-") for name in workers_seen()), seconds=120)
