"""A real Celery worker process on the real Redis broker, pointed at the test database."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from celery.utils.nodenames import host_format
from django.conf import settings

from config import celery_app
from config.database import current_database_url
from config.ports import BASE_DIR
from config.services import EmbeddedRedis, free_port
from config.workers import CeleryWorker

# A worker loads torch and two models: on a slow machine whose cores the other test process keeps busy, that took
# over a minute. A worker that exits fails at once.
READY_SECONDS = 300
# The test workers run at the tests' own CPU priority. `make run`'s worker yields to the web (WORKER_NICENESS),
# but here there is no web to yield to, only other tests: a niced worker beside the bench's smoke run (torch on
# both cores) did not embed one group of an import in five minutes. test_worker.py checks the niceness itself.
TEST_NICENESS = "0"


class Worker(CeleryWorker):
    """A `celery worker` process on the test database; `env` adds to its environment (e.g. another REDIS_URL),
    `beat` runs Celery beat inside it, as `make run` does; `app` names another Celery app module (a test's)."""

    def __init__(
        self,
        env: dict[str, str] | None = None,
        *,
        name: str = "test",
        beat: bool = False,
        pool: str = "solo",
        app: str = "config",
        own_session: bool = False,
    ) -> None:
        self.log = BASE_DIR / ".run" / f"{name}-worker.log"
        super().__init__(
            hostname=f"{name}-{os.getpid()}@%h",
            app=app,
            pool=pool,
            concurrency=1 if pool == "prefork" else None,
            loglevel="INFO",
            beat=beat,
            gossip=False,
            mingle=False,
            heartbeat=False,
            output=self.log,
            own_session=own_session,
        )
        self.extra_env = env or {}
        self.broker = settings.CELERY_BROKER_URL  # (the session's worker's; a test's own may name another)

    def start(self) -> None:
        """Start the worker on the test database, once it has logged that it is ready."""
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": current_database_url(),
            "WORKER_NICENESS": TEST_NICENESS,
            **self.extra_env,
        }
        super().start()
        self.wait_until(lambda: self.log_has("ready."), READY_SECONDS)

    def settle(self, seconds: float = 120) -> None:
        """Drop the tasks still queued, let the one running finish and revoke those waiting for a retry: once the
        test that queued them is over, a task would write into the next test's database, or into one being
        emptied (a deadlock with the flush, which then failed and left the test's rows to the next test). A test
        that pointed the app at another broker (one that is down) queued nothing the worker can see."""
        if celery_app.conf.broker_url != self.broker:
            return
        control = celery_app.control
        control.purge()
        # A solo worker answers between tasks only: its answer says the one it ran is done.
        node = [host_format(self.hostname or "")]
        deadline = time.monotonic() + seconds
        while not control.ping(destination=node, timeout=0.5):
            if not self.running():
                return
            if time.monotonic() > deadline:
                pytest.fail(f"the Celery worker did not finish its task within {seconds:.0f}s")
        waiting = control.inspect(destination=node, timeout=2).scheduled() or {}
        retries = [entry["request"]["id"] for entries in waiting.values() for entry in entries]
        if retries:
            control.revoke(retries)


_session_worker: list[Worker] = []  # the session's worker, once a test has asked for it


@pytest.fixture(scope="session")
def celery_worker(django_db_setup: None, django_db_blocker: object) -> Iterator[Worker]:
    """One worker for the session; tests that use it need committed data (`transaction=True`)."""
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    worker = Worker()
    worker.start()
    _session_worker.append(worker)
    yield worker
    _session_worker.clear()
    worker.stop()


@pytest.fixture(autouse=True)
def _celery_worker_settled(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that commits (pytest-django's flush comes after this fixture's end, as its own autouse
    fixture was set up first), the session's worker is left with nothing of the test's to run; most tests queue
    tasks they never wait for (an answer's verification)."""
    yield
    for worker in _session_worker:
        if transactional(request.node) and worker.running():
            worker.settle()


def transactional(item: pytest.Item) -> bool:
    """Whether the test commits, and empties the database after it (pytest-django's `transaction=True`)."""
    marker = item.get_closest_marker("django_db")
    fixtures = getattr(item, "fixturenames", [])
    return bool(marker and marker.kwargs.get("transaction")) or "transactional_db" in fixtures


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    """A Redis of the test's own: no other test's worker answers on it, and the test may stop it."""
    server = EmbeddedRedis(free_port(), folder=tmp_path / "redis")
    server.start()
    yield server
    server.stop()


def wait_for(condition: object, seconds: float = 120.0) -> None:
    """Poll `condition()` until it is true; fail the test after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {seconds:.0f}s")
        time.sleep(0.25)
