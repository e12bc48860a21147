"""`make bench` cannot rot unseen: CI runs it once at its smallest sizes, and every section prints its figures.
A smoke run (docs/commands.md gives its time): it asserts that each section ran, and checks its figures against
bench/baseline.json with SMOKE_MARGIN (docs/performance.md#yardsticks)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from bench.cli import SECTIONS
from config.database import current_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
# Wide enough for what unchanged code moved under load, in yardstick units measured beside each section (1.5x at
# most over the checked figures in two runs), narrow enough that a 2x loss is caught in a run up to 1.1x luckier
# than the baseline's (tests/bench/test_baseline.py slows a function down on purpose and sees it caught).
SMOKE_MARGIN = "1.8"


def figures(value: object) -> list[float]:
    """Every number in a section's report, however deep."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [n for item in value.values() for n in figures(item)]
    if isinstance(value, list):
        return [n for item in value for n in figures(item)]
    return []


@pytest.mark.slow
def test_every_section_of_the_bench_runs_and_prints_its_figures():
    # As `make bench` runs it: the development settings (Celery on Redis's database 0, apart from the test
    # session's worker), its own scratch database on the test server, dropped afterwards.
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": current_database_url(),
        # Redis databases of its own (2 and 3: no test process's, nor the load test's 0 and 1), so no other test's
        # worker answers on its broker, and no other test clears its cache or counts its readers' requests.
        "REDIS_URL": settings.REDIS_URL.rsplit("/", 1)[0] + "/2",
        "CACHE_URL": settings.REDIS_URL.rsplit("/", 1)[0] + "/3",
    }
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--smallest", "--check-baseline", SMOKE_MARGIN],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    for section in ["import", *SECTIONS]:
        assert figures(report.get(section)), f"the bench printed no figures for {section}"
    # A streamed answer's first word comes no sooner than the fake Claude writes it, and before the whole one's.
    alone = report["streaming"]["first_word_over_fake_first_token"]["1 reader"]
    assert 1.0 <= alone["streamed"]["p50_ratio"] < alone["whole"]["p50_ratio"]
