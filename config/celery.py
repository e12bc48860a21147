"""The Celery app: configured from Django settings (`CELERY_*`), tasks discovered in each app's tasks.py."""

import logging
import os
from typing import Any

from celery import Celery
from celery.signals import after_setup_logger, after_setup_task_logger, worker_init

# The settings this process was started with (None: it named none). Importing `config` (as
# `python -m config.devstack` does) fills in the default below; the devstack hands its children this instead.
SETTINGS_NAMED = os.environ.get("DJANGO_SETTINGS_MODULE")
# Production, as config/wsgi.py: `make run` and the tests name their settings for the workers they start
# (config/devstack.py, tests/celery_worker.py), so a worker started without them never runs with DEBUG on and
# the development key.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("groundwork")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@after_setup_logger.connect
@after_setup_task_logger.connect
def scrub_worker_logs(logger: logging.Logger, **kwargs: Any) -> None:
    """The worker sets up its own log handlers; they drop secrets too (see config/scrubbing.py)."""
    from config.scrubbing import scrub_handlers

    scrub_handlers(logger)


@worker_init.connect
def yield_to_readers(**kwargs: Any) -> None:
    """The worker (its pool processes inherit this) runs at a lower CPU priority than the web: on shared cores
    a reader's question is answered first and its check follows, rather than both waiting on each other."""
    from django.conf import settings

    os.nice(settings.WORKER_NICENESS)
