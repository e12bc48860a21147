"""A real browser (Debian's Chromium driven by Playwright) against the site served by gunicorn, with a real
Celery worker, on the test database."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from config.database import current_database_url
from config.devstack import free_port

BASE_DIR = Path(__file__).resolve().parent.parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = BASE_DIR / ".run" / "screenshots" / time.strftime("%Y%m%d-%H%M%S")
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def site(django_db_setup: None, django_db_blocker: object) -> Iterator[str]:
    """gunicorn serving the test database on a free local port; yields its base URL."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": current_database_url(),
    }
    log = BASE_DIR / ".run" / "test-gunicorn.log"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi",
            "--config",
            "python:config.gunicorn",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
        ],
        cwd=BASE_DIR,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"gunicorn did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    yield f"http://127.0.0.1:{port}"
    server.terminate()
    server.wait(20)


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
