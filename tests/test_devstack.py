"""The service runner behind `make run` and `make test`."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from config import ports
from config.database import current_database_url
from config.devstack import LINTERS, cpu_loop_seconds, parallel_options, suite_timed

BASE_DIR = Path(__file__).resolve().parent.parent
# Stands in for pytest under `make test`: on Ctrl-C (SIGINT) it cleans up, which here means writing a file.
CHILD = """
import signal, sys, time
def cleaned_up(signum, frame):
    open(sys.argv[1], "w").write("cleaned up")
    sys.exit(130)
signal.signal(signal.SIGINT, cleaned_up)
print("ready", flush=True)
time.sleep(60)
"""


def test_a_terminated_runner_lets_its_command_clean_up_and_exits_143(tmp_path):
    marker = tmp_path / "cleaned-up"
    # With both addresses given, the runner starts no service of its own.
    env = {**os.environ, "DATABASE_URL": current_database_url(), "REDIS_URL": settings.REDIS_URL}
    runner = subprocess.Popen(
        [sys.executable, "-m", "config.devstack", "exec", "--", "python", "-c", CHILD, str(marker)],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # so that a test that fails can stop the runner and its command together
    )
    assert runner.stdout is not None
    deadline = time.monotonic() + 30
    while runner.stdout.readline() != "ready\n":  # (the runner first echoes the command, script and all)
        assert time.monotonic() < deadline and runner.poll() is None, "the command did not start"

    runner.send_signal(signal.SIGTERM)  # as CI does when a job is cancelled
    try:
        # Longer than the runner gives its command to leave on Ctrl-C, so that a command that did not hear it
        # reads apart from a runner that did not stop.
        code = runner.wait(45)
    except subprocess.TimeoutExpired:
        os.killpg(runner.pid, signal.SIGKILL)
        pytest.fail(
            f"the runner was still running 45 s after SIGTERM; it printed:\n{runner.communicate()[0]}"
        )
    said = runner.stdout.read()
    assert code == 128 + signal.SIGTERM, said
    assert marker.read_text() == "cleaned up", said
    assert "terminated: interrupting python" in said


def test_no_checkout_port_can_be_taken_by_an_outgoing_connection():
    """The embedded servers' ports lie outside the range the kernel hands out to outgoing connections: a port
    inside it can be held as a connection's local end, and the server would then fail to start."""
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    for first in (ports.POSTGRES_PORTS_FROM, ports.REDIS_PORTS_FROM):
        last = first + ports.PORTS_PER_CHECKOUT_RANGE - 1
        assert last < low or first > high, f"{first}-{last} overlaps {low}-{high}"
    for port in (ports.EMBEDDED_POSTGRES_PORT, ports.EMBEDDED_REDIS_PORT):
        assert not low <= port <= high


def test_the_runner_hands_on_the_settings_it_was_given_and_no_default_of_its_own():
    # Importing `config` sets the Celery app's default (production); `make run`'s processes must not inherit it
    # (they default to the local settings), nor `exec`'s command (pytest reads its own from pyproject.toml).
    env = {**os.environ, "DATABASE_URL": current_database_url(), "REDIS_URL": settings.REDIS_URL}
    show = ["exec", "--", "python", "-c", "import os; print(os.environ.get('DJANGO_SETTINGS_MODULE'))"]

    def child_sees(**extra: str) -> str:
        environment = {k: v for k, v in env.items() if k != "DJANGO_SETTINGS_MODULE"} | extra
        result = subprocess.run(
            [sys.executable, "-m", "config.devstack", *show],
            cwd=BASE_DIR,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout.strip().splitlines()[-1]

    assert child_sees() == "None"
    assert child_sees(DJANGO_SETTINGS_MODULE="config.settings.local") == "config.settings.local"


def test_the_whole_suite_s_time_is_given_in_cpu_loops_too():
    # The loop's geometric mean before and after: 0.1 s and 0.4 s make 0.2 s, and 600 s is 3,000 of them.
    assert suite_timed(600, 0.1, 0.4) == (
        "the whole suite took 600 s: 3,000 CPU loops (the loop took 0.100 s before it and 0.400 s after)"
    )
    assert suite_timed(600, None, 0.4) == "the whole suite took 600 s (the CPU loop could not be measured)"
    loop = cpu_loop_seconds(dict(os.environ))
    assert loop is not None and 0.005 < loop < 5  # the bench's own loop, measured in a process of its own


def test_the_pre_commit_hooks_run_the_linters_make_check_runs():
    config = yaml.safe_load((Path(__file__).resolve().parent.parent / ".pre-commit-config.yaml").read_text())
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    entries = [hook["entry"].split() for hook in hooks]
    assert all(entry[0].startswith(".venv/bin/") for entry in entries)  # the venv's tools: nothing downloaded
    assert [(entry[0].removeprefix(".venv/bin/"), *entry[1:]) for entry in entries] == list(LINTERS)
    assert all(hook["language"] == "system" and hook["pass_filenames"] is False for hook in hooks)


GROUPED = """
import os, pathlib, time, pytest

@pytest.mark.parametrize("n", range(8))
def test_ungrouped(n): time.sleep(0.1)

@pytest.mark.xdist_group("broker")
@pytest.mark.parametrize("n", range(8))
def test_grouped(n): pathlib.Path(f"ran-{n}").write_text(os.environ["PYTEST_XDIST_WORKER"])
"""


def test_the_tests_of_one_group_run_in_one_process(tmp_path):
    """`make test`'s processes keep an `xdist_group`'s tests together (tests that share Redis's database 0 must
    not run at once). pytest 9.2 broke this without a word (pytest-xdist#1386): grouped tests were dealt out as
    any others, and the two `make load` smoke runs took each other's verifications. Dealt out as any others, the
    eight would all fall to one of the two processes once in 128 runs."""
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:django", "-p", "no:cacheprovider", *parallel_options(2)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert len({path.read_text() for path in tmp_path.glob("ran-*")}) == 1


def test_a_runner_that_starts_no_service_leaves_the_services_file_to_the_one_that_did():
    # `.run/services.env` points every `manage.py` command at the services `make run` or `make test` started; a
    # runner given both addresses (as this one is, the test database's) started none and must not repoint them.
    services_file = BASE_DIR / ".run" / "services.env"
    before = services_file.read_text() if services_file.exists() else None
    env = {**os.environ, "DATABASE_URL": current_database_url(), "REDIS_URL": settings.REDIS_URL}
    done = subprocess.run(
        [sys.executable, "-m", "config.devstack", "exec", "--", "true"], cwd=BASE_DIR, env=env, timeout=120
    )
    assert done.returncode == 0
    assert (services_file.read_text() if services_file.exists() else None) == before
