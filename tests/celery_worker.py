"""A real Celery worker process on the real Redis broker, pointed at the test database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings

from config.database import current_database_url
from config.devstack import EmbeddedRedis, free_port

BASE_DIR = Path(__file__).resolve().parent.parent


class Worker:
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
    ) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.env = env or {}
        self.name = name
        self.beat = beat
        self.pool = pool
        self.app = app
        self.log = BASE_DIR / ".run" / f"{name}-worker.log"

    def start(self) -> None:
        self.log.parent.mkdir(exist_ok=True)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": current_database_url(),
            **self.env,
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                self.app,
                "worker",
                "--pool",
                self.pool,
                *(["--concurrency", "1"] if self.pool == "prefork" else []),
                "--loglevel",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--hostname",
                f"{self.name}-{os.getpid()}@%h",
                *(["--beat"] if self.beat else []),
            ],
            cwd=BASE_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while b"ready." not in self.log.read_bytes():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Celery worker did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.2)

    def pool_processes(self) -> list[int]:
        """The process ids of a prefork worker's pool (its child processes)."""
        assert self.process is not None
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text()
        return [int(pid) for pid in children.split()]

    def kill(self) -> None:
        """SIGKILL, as the kernel's OOM killer or a pulled plug would: no clean-up, no acknowledgement."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture(scope="session")
def celery_worker(django_db_setup: None, django_db_blocker: object) -> Iterator[Worker]:
    """One worker for the session; tests that use it need committed data (`transaction=True`)."""
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    worker = Worker()
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    """A Redis of the test's own: no other test's worker answers on it, and the test may stop it."""
    server = EmbeddedRedis(free_port(), folder=tmp_path / "redis")
    server.start()
    yield server
    server.stop()


def wait_for(condition: object, seconds: float = 60.0) -> None:
    """Poll `condition()` until it is true; fail the test after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {seconds:.0f}s")
        time.sleep(0.25)
