"""A real browser (Debian's Chromium driven by Playwright) against the site served by gunicorn, with a real
Celery worker, on the test database."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from config.database import current_database_url
from config.services import free_port

BASE_DIR = Path(__file__).resolve().parent.parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = BASE_DIR / ".run" / "screenshots" / time.strftime("%Y%m%d-%H%M%S")
# How long gunicorn may take to answer its first request (a worker that exits fails at once).
START_SECONDS = 180
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


class Site:
    """gunicorn serving the test database on a free local port; `env` adds to its environment."""

    def __init__(self, env: dict[str, str] | None = None, *, name: str = "test") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = BASE_DIR / ".run" / f"{name}-gunicorn.log"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": current_database_url(),
            **(env or {}),
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Site:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi",
                "--config",
                "python:config.gunicorn",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "2",
            ],
            cwd=BASE_DIR,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        # Ready once it answers a request: gunicorn listens before its master has loaded the models, which on
        # a slow, busy machine took longer than a test's request waits.
        deadline = time.monotonic() + START_SECONDS
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.2)
        return self

    def _answers(self) -> bool:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", self.port)) != 0:
                return False
        try:
            with urllib.request.urlopen(f"{self.url}/api/health", timeout=START_SECONDS):
                return True
        except urllib.error.HTTPError:
            return True  # an answer all the same (the health check may say a service is down)
        except OSError:
            return False

    def stop(self) -> None:
        """Stop gunicorn as an operator does (SIGTERM: its workers finish their requests, within its graceful
        timeout of 30 s); one that is still there after a minute, on a busy machine, is killed."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="session")
def site(django_db_setup: None, django_db_blocker: object) -> Iterator[str]:
    """The site on the session's services; yields its base URL."""
    served = Site().start()
    yield served.url
    served.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is not installed: .ci/run installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the tests' ORM calls are still synchronous.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS)
        yield launched
        launched.close()


def screenshot(page: object, name: str) -> Path:
    """Save a full-page screenshot under this run's folder and return its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    return path
