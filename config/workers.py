"""A Celery worker in a process of its own, started and stopped for the tests, the bench, the load test and
`make run` (`config.devstack`).

Each caller says how its worker runs (pool, concurrency, log level, beat, where its output goes) and how it knows
that the worker is ready: a line in its log, or the workers that answer a broadcast. Settings never import this
module (an import-linter contract in pyproject.toml): it is a development and benchmarking tool.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Literal

from config.ports import BASE_DIR

# Where a worker's output goes: a log file, this process's own stdout and stderr, or nowhere.
Output = Path | Literal["inherit", "discard"]


class WorkerNotReady(RuntimeError):
    """The worker exited, or did not become ready in time."""


class CeleryWorker:
    """One `celery worker` process, run from the project's folder.

    `hostname` names it to the broker (`%h` is the machine's name); without it, Celery's default. `env` is its
    whole environment (default: this process's). With `own_session`, it and its pool form a process group of
    their own, which `terminate` and `kill` signal as one (as `make run` stops it); else only the main process
    is signalled, and it stops its pool itself. `grace` is how long `stop` waits for a warm shutdown before it
    kills the worker.
    """

    def __init__(
        self,
        *,
        hostname: str | None = None,
        app: str = "config",
        pool: str | None = None,
        concurrency: int | None = None,
        loglevel: str = "INFO",
        beat: bool = False,
        gossip: bool = True,
        mingle: bool = True,
        heartbeat: bool = True,
        env: Mapping[str, str] | None = None,
        output: Output = "inherit",
        own_session: bool = False,
        grace: float = 20.0,
    ) -> None:
        self.hostname = hostname
        self.app = app
        self.pool = pool
        self.concurrency = concurrency
        self.loglevel = loglevel
        self.beat = beat
        self.gossip = gossip
        self.mingle = mingle
        self.heartbeat = heartbeat
        self.env = dict(os.environ if env is None else env)
        self.output = output
        self.own_session = own_session
        self.grace = grace
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        return [
            *(sys.executable, "-m", "celery", "-A", self.app, "worker", "--loglevel", self.loglevel),
            *(["--pool", self.pool] if self.pool else []),
            *(["--concurrency", str(self.concurrency)] if self.concurrency is not None else []),
            *(["--hostname", self.hostname] if self.hostname else []),
            *([] if self.gossip else ["--without-gossip"]),
            *([] if self.mingle else ["--without-mingle"]),
            *([] if self.heartbeat else ["--without-heartbeat"]),
            *(["--beat"] if self.beat else []),
        ]

    def start(self) -> None:
        """Start the process; it is not ready yet (see `wait_until`)."""
        stdout: int | IO[bytes] | None = None
        if self.output == "discard":
            stdout = subprocess.DEVNULL
        elif isinstance(self.output, Path):
            self.output.parent.mkdir(parents=True, exist_ok=True)
            stdout = self.output.open("wb")
        self.process = subprocess.Popen(
            self.command(),
            cwd=BASE_DIR,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=None if stdout is None else subprocess.STDOUT,
            start_new_session=self.own_session,
        )

    @property
    def pid(self) -> int:
        assert self.process is not None, "the worker was never started"
        return self.process.pid

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, characters: int = 3000) -> str:
        """The end of the worker's log file ('' when its output goes elsewhere)."""
        if not isinstance(self.output, Path) or not self.output.exists():
            return ""
        return self.output.read_text(errors="replace")[-characters:]

    def log_has(self, text: str) -> bool:
        return isinstance(self.output, Path) and text.encode() in self.output.read_bytes()

    def wait_until(self, ready: Callable[[], bool], seconds: float, every: float = 0.2) -> float:
        """Poll `ready()` while the worker runs; the seconds until it held (see `workers_wait`)."""
        return workers_wait([self], ready, seconds, every)

    def pool_processes(self) -> list[int]:
        """The process ids of a prefork worker's pool (its child processes)."""
        children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text()
        return [int(pid) for pid in children.split()]

    def _signal(self, signum: signal.Signals) -> None:
        assert self.process is not None
        if self.own_session:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)

    def terminate(self) -> None:
        """Ask for a warm shutdown (SIGTERM): tasks in progress finish first."""
        if self.running():
            self._signal(signal.SIGTERM)

    def stopped(self) -> None:
        """Wait up to `grace` seconds for the worker to exit after `terminate`, then kill it."""
        if self.process is None:
            return
        try:
            self.process.wait(self.grace)
        except subprocess.TimeoutExpired:
            self.kill()

    def stop(self) -> None:
        self.terminate()
        self.stopped()

    def kill(self) -> None:
        """SIGKILL, as the kernel's OOM killer or a pulled plug would: no clean-up, no acknowledgement."""
        assert self.process is not None
        self._signal(signal.SIGKILL)
        self.process.wait(10)


def workers_wait(
    workers: Sequence[CeleryWorker], ready: Callable[[], bool], seconds: float, every: float = 0.2
) -> float:
    """Poll `ready()` (every `every` seconds; 0 for a check that waits on the broker itself) until it holds; the
    seconds that took. Raises WorkerNotReady when a worker exits first or `seconds` pass."""
    began = time.monotonic()
    while not ready():
        stopped = [worker for worker in workers if not worker.running()]
        if stopped or time.monotonic() - began > seconds:
            worker = (stopped or workers)[0]
            name = f" {worker.hostname}" if worker.hostname else ""
            what = "exited" if stopped else f"was not ready within {seconds:.0f} s"
            tail = worker.log_tail()
            raise WorkerNotReady(f"the Celery worker{name} {what}" + (f":\n{tail}" if tail else ""))
        time.sleep(every)
    return time.monotonic() - began


@contextlib.contextmanager
def workers_running(workers: Sequence[CeleryWorker]) -> Iterator[Sequence[CeleryWorker]]:
    """The workers started, and stopped on the way out: all asked at once, so their shutdowns overlap."""
    try:
        for worker in workers:
            worker.start()
        yield workers
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.stopped()
