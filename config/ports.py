"""This checkout's own ports for the embedded PostgreSQL and Redis, which `config.services` starts and the
settings connect to. Kept apart from the runner so that settings need nothing of it."""

from __future__ import annotations

import zlib
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
PORTS_PER_CHECKOUT_RANGE = 500
POSTGRES_PORTS_FROM = 24000
REDIS_PORTS_FROM = 6400


def checkout_port(first: int) -> int:
    """This checkout's own port among the PORTS_PER_CHECKOUT_RANGE from `first`, stable across runs: two clones on
    one machine (a second worktree, a CI runner beside a developer) never share an embedded server, its data or its
    queue. Both ranges lie below Linux's ports for outgoing connections (32768-60999): a port there can be held, for
    a while, as the local end of some connection, and the server could not start on it."""
    return first + zlib.crc32(str(BASE_DIR).encode()) % PORTS_PER_CHECKOUT_RANGE


EMBEDDED_POSTGRES_PORT = checkout_port(POSTGRES_PORTS_FROM)
EMBEDDED_REDIS_PORT = checkout_port(REDIS_PORTS_FROM)
