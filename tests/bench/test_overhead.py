"""An import's overhead beyond embedding in CPU seconds: the work a process and the database server did, whoever
else shares the machine."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.db import connection

from bench.overhead import Overhead, Run, database_cpu_seconds, in_encoder_runs
from bench.timing import cpu_seconds

BURN = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass"


def test_an_ended_childs_cpu_time_counts_once_it_has_been_waited_for():
    before_reaped, before = cpu_seconds(os.getpid(), reaped=True), cpu_seconds(os.getpid())
    subprocess.run([sys.executable, "-c", BURN], check=True)
    assert cpu_seconds(os.getpid(), reaped=True) - before_reaped >= 0.45
    assert cpu_seconds(os.getpid()) - before < 0.45  # without `reaped`: this process's own time alone


@pytest.mark.django_db
def test_the_database_servers_work_counts_in_an_imports_cpu_seconds():
    if database_cpu_seconds() == 0.0:
        pytest.skip("the database server does not run on this machine")

    def query() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM generate_series(1, 5000000)")

    run = in_encoder_runs(query)
    # The query's time is the server's, not this process's: counted all the same.
    assert run.cpu_seconds >= 0.5 * run.seconds > 0


def test_the_floor_is_the_work_beyond_the_encoders_spread_over_every_core():
    pairs = Overhead()
    pairs.imports.append(Run(seconds=30.0, encoder_runs=300.0, cpu_seconds=45.0, result=None))
    pairs.encodes.append(Run(seconds=17.0, encoder_runs=170.0, cpu_seconds=33.0, result=None))
    figures = pairs.figures("", 5000)
    assert figures["overhead_cpu_seconds_per_1000_passages"] == 2.4  # 12 CPU seconds over 5,000 passages
    cores = os.cpu_count() or 1
    assert figures["overhead_floor_pct"] == round(100 * 12 / cores / 17, 1)
    assert figures["overhead_beyond_encode_pct"] == round(100 * (300 / 170 - 1), 1)
