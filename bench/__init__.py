"""Benchmark and load-test tooling: not part of any app, and no app imports it (an import-linter contract).

    python -m bench [--only SECTION ...] [--runs N] ...   # benchmark figures as JSON (docs/commands.md)
    python -m bench.loadtest [--readers 50] [--seconds 60]  # concurrent readers against a local server

Both run with the services `config.devstack` starts (`make bench`, `make load`) and Django's development settings
unless DJANGO_SETTINGS_MODULE names others, as `manage.py` does.
"""

from __future__ import annotations

import os

import django

SETTINGS = "config.settings.local"


def django_setup() -> None:
    """Django set up as `manage.py` sets it up, for the entry points that run outside it."""
    # Importing `config` (the load test does, for its workers) fills in the Celery app's default, production;
    # only settings this process was started with are kept.
    from config.celery import SETTINGS_NAMED

    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS_NAMED or SETTINGS
    # An import the bench times would queue the gate's self-calibration, and a worker the bench starts (Verify-all,
    # the fanned-out import) would run it and change the thresholds under the sections after; the notes section
    # measures self-calibration itself. Its processes inherit this.
    os.environ.setdefault("RETRIEVAL_PROBES_AFTER_IMPORT", "false")
    django.setup()
