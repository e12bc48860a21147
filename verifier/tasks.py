"""Celery tasks: thin shells that load ids and call one service."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task
from celery.signals import worker_init, worker_process_init, worker_ready, worker_shutdown
from django.db import InterfaceError, OperationalError

from providers import embeddings
from verifier import queueing, verifying
from verifier.health import Heartbeat
from verifier.start_up import models_load

_heartbeat: Heartbeat | None = None


@shared_task(
    bind=True,
    ignore_result=True,  # nobody waits on it: the verification row is the result
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError, ConnectionError),
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=6,
)
def verify_answer(self: Task[Any, Any], verification_id: int) -> str:
    """Check one answer's claims. Safe to run twice: a finished verification is left alone."""
    verification = verifying.verification_run(verification_id=verification_id)
    return verification.status if verification is not None else "skipped"


@shared_task(name="verifier.tasks.requeue_pending_verifications")  # the name Celery beat's schedule gives
def verifications_requeue() -> int:
    """Periodic (Celery beat): queue again what was left pending while the broker was away."""
    return queueing.verifications_requeue()


@worker_ready.connect
def verifications_requeue_on_ready(**kwargs: Any) -> None:
    """A worker coming up queues again what was left pending, e.g. while the broker was away."""
    queueing.verifications_requeue()


@worker_ready.connect
def start_heartbeat(sender: Any, **kwargs: Any) -> None:
    """The worker tells `/api/health` and the operators' logs that it is alive, every few seconds."""
    global _heartbeat
    _heartbeat = Heartbeat(sender.hostname)
    _heartbeat.start()


@worker_shutdown.connect
def stop_heartbeat(**kwargs: Any) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()


@worker_init.connect
def load_model_before_forking(**kwargs: Any) -> None:
    """The worker's main process loads the models once (`models_load`), before its pool forks.

    Every pool process, the first ones and each replacement for one that died, then starts with the models
    already in memory (shared copy-on-write) and reports "up" at once. Loaded in the pool process instead, a
    cold disk made each replacement miss the pool's 4 s start-up deadline and be killed, for ever.
    """
    models_load()


@worker_process_init.connect
def prepare_worker_process(**kwargs: Any) -> None:
    """Each pool process keeps torch to one thread: the processes share the cores."""
    embeddings.use_one_thread()
