"""The site as gunicorn serves it (config/gunicorn.py): its master loads Django and the models once, before it
forks the web processes, which start with them in memory."""

from pathlib import Path

import pytest

from tests.celery_worker import wait_for
from tests.e2e.conftest import Site

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def memory_kb(pid: int) -> dict[str, int]:
    """A process's memory by kind, in kB (/proc/PID/smaps_rollup)."""
    lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]
    return {name.rstrip(":"): int(kb) for name, kb, *_ in (line.split() for line in lines)}


def test_the_web_processes_share_the_models_their_master_loaded_and_stop_cleanly():
    site = Site(name="serving").start()
    try:
        assert site.process is not None
        master = site.process.pid
        wait_for(lambda: site.log.read_text().count("Worker ready") == 2)
        memories = [memory_kb(pid) for pid in children(master)]
    finally:
        site.stop()
    for memory in memories:
        # Written by the master, read by its children: the pages of torch's weights, Django and the URLconf stay
        # shared until a process writes to them (about 440 MB shared and 20 MB of its own each, when each web
        # process loaded them itself 5 MB shared and 440 MB of its own).
        assert memory["Shared_Dirty"] > 4 * memory["Private_Dirty"], memory
    # Each stopped when told, none killed (gunicorn logs a worker "was sent SIGKILL!" or "SIGABRT!").
    log = site.log.read_text()
    assert log.count("Worker exiting") == 2 and "was sent SIG" not in log, log[-3000:]
