"""The one launcher of Celery workers (config/workers.py): a worker that cannot start says why, at once."""

from pathlib import Path

import pytest

from config.workers import CeleryWorker, WorkerNotReady


def test_a_worker_that_exits_before_it_is_ready_fails_at_once_with_its_log(tmp_path: Path) -> None:
    worker = CeleryWorker(hostname="doomed@%h", app="no_such_app_module", output=tmp_path / "worker.log")
    worker.start()
    try:
        with pytest.raises(WorkerNotReady) as failed:
            worker.wait_until(lambda: False, seconds=120)
    finally:
        worker.stop()
    assert "the Celery worker doomed@%h exited" in str(failed.value)
    assert "no_such_app_module" in str(failed.value)  # the log's tail says what went wrong
    assert not worker.running()
