"""An import's embedding fanned out to the Celery workers (`import_garden --workers`).

The importing process stays the coordinator: it reads the notes, decides what changed, and writes each group
itself, in one transaction, as an import in one process does. Only the encoding travels: each group's texts go
to the workers as an `embed_texts` task, a bounded window of them at a time, and come back as float32 vectors
(base64 in Celery's JSON messages). The task is pure, so a batch run twice (its worker died and another got it)
does no harm. A batch that fails or does not come back stops the import after the groups already written;
running it again resumes from the notes not yet stored. Workers report each batch of passages they finish,
which feeds the progress bar.
"""

from __future__ import annotations

import base64
import contextlib
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from celery import current_app, states
from celery.exceptions import TimeoutError as ResultTimeout
from django.conf import settings
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

from garden.sync.embedding import Embedded, Embedding, Progress, encode
from garden.sync.writing import Pending
from providers import embeddings

if TYPE_CHECKING:
    from celery.result import AsyncResult

# Workers answer a roll call in milliseconds, on a busy machine in seconds (2 s was once too few for a worker just
# started beside a test run); a solo-pool worker busy with a task does not answer at all.
REPLY_SECONDS = 5.0
# Batches in flight per worker process: one running and one waiting, so no process idles while the coordinator
# writes, and a verification queued meanwhile waits behind at most one batch per process.
BATCHES_PER_PROCESS = 2
PROGRESS = "PROGRESS"  # the state of a batch part-way done; its meta says how many passages are embedded

NO_WORKERS = (
    "No Celery worker answered within {seconds:g}s: start one (celery -A config worker) "
    "or import without --workers."
)
BROKER_DOWN = "The Celery broker does not answer ({error}): check REDIS_URL, or import without --workers."
BATCH_LATE = "A batch of {texts} passages did not come back from the workers within {seconds:g}s."
BATCH_FAILED = "A batch of {texts} passages failed on a worker ({error})."
BROKER_LOST = "The Celery broker went away ({error})."


class FanOutError(Exception):
    """The workers cannot embed the import; the message says why, in words a user can act on."""


@dataclass(frozen=True)
class Workers:
    """The Celery workers that answered the roll call, and how many processes they run between them."""

    names: tuple[str, ...]
    processes: int


def workers_find(timeout: float = REPLY_SECONDS) -> Workers:
    """The workers answering now; FanOutError when none does or the broker is away."""
    try:
        replies = current_app.control.inspect(timeout=timeout).stats() or {}
    except (OperationalError, RedisError) as error:
        raise FanOutError(BROKER_DOWN.format(error=error)) from error
    if not replies:
        raise FanOutError(NO_WORKERS.format(seconds=timeout))
    processes = sum(int(stats.get("pool", {}).get("max-concurrency") or 1) for stats in replies.values())
    return Workers(names=tuple(sorted(replies)), processes=processes)


def default_batch_timeout() -> float:
    """How long a batch may take to come back: a batch whose worker died is handed to another after the
    visibility timeout, and then runs within the task time limit."""
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    return float(visibility + settings.CELERY_TASK_TIME_LIMIT)


def vectors_pack(vectors: Sequence[Sequence[float]]) -> str:
    """Vectors as base64 of their float32 values: a quarter of their size as JSON numbers, and exact."""
    return base64.b64encode(np.asarray(vectors, dtype="<f4").tobytes()).decode("ascii")


def vectors_unpack(packed: str) -> list[list[float]]:
    matrix = np.frombuffer(base64.b64decode(packed), dtype="<f4").reshape(-1, embeddings.dimensions())
    vectors: list[list[float]] = matrix.tolist()
    return vectors


def batch_embed(texts: list[str], backend: str, on_batch: Progress | None = None) -> dict[str, Any]:
    """The worker's half: the texts' vectors by the importing process's `backend` (whatever the worker's own
    EMBEDDING_BACKEND: a garden's vectors come from one backend), packed, and the seconds encoding them took."""
    vectors, seconds = encode(texts, on_batch, embeddings.backend_named(backend))
    return {"vectors": vectors_pack(vectors), "seconds": seconds}


def _failure(answer: object) -> str:
    return f"{type(answer).__name__}: {answer}" if isinstance(answer, BaseException) else str(answer)


@dataclass
class _Batch:
    embedding: Embedding
    result: AsyncResult[Any] | None  # None: every vector of the group was reused, nothing was sent
    reported: int = 0  # passages already passed on to the progress bar


def groups_embedded_on_workers(
    groups: Iterable[Sequence[Pending]],
    on_progress: Progress | None,
    *,
    workers: Workers,
    batch_timeout: float | None = None,
) -> Iterator[Embedded]:
    """The groups with their vectors, in order, encoded by the workers: each group's texts are one task,
    `BATCHES_PER_PROCESS` per worker process in flight, the next sent before the caller writes this one.

    FanOutError when a batch fails, does not come back within `batch_timeout` seconds (default: see
    `default_batch_timeout`) or the broker goes away; the batches still out are then revoked, as they are
    when the caller stops early (an error while writing, Ctrl-C).
    """
    from garden.tasks import embed_texts  # here, not above: garden.tasks imports garden.sync

    timeout = batch_timeout or default_batch_timeout()
    backend = embeddings.active_backend().value
    window: deque[_Batch] = deque()
    out: dict[str, _Batch] = {}
    following = iter(groups)

    def advance(batch: _Batch, done: int) -> None:
        if done > batch.reported:
            if on_progress:
                on_progress(done - batch.reported)
            batch.reported = done

    def heard(meta: dict[str, Any]) -> None:
        """A worker's report on any batch out, heard while waiting for the oldest: the bar moves as they work."""
        batch = out.get(meta["task_id"])
        if batch is not None and meta["status"] == PROGRESS:
            advance(batch, int(meta["result"]["embedded"]))
        elif batch is not None and meta["status"] == states.SUCCESS:
            advance(batch, len(batch.embedding.texts))

    def send() -> None:
        while len(window) < workers.processes * BATCHES_PER_PROCESS:
            group = next(following, None)
            if group is None:
                return
            embedding = Embedding.plan(group)
            if not embedding.texts:
                window.append(_Batch(embedding, None))
                continue
            try:
                result = embed_texts.apply_async((embedding.texts, backend))
            except (OperationalError, RedisError) as error:
                raise FanOutError(BROKER_LOST.format(error=error)) from error
            window.append(_Batch(embedding, result))
            out[result.id] = window[-1]

    try:
        send()
        while window:
            batch = window[0]
            if batch.result is None:
                window.popleft()
                send()
                yield Embedded(batch.embedding.group, 0, 0.0)
                continue
            texts = len(batch.embedding.texts)
            try:
                answer = batch.result.get(timeout=timeout, propagate=False, on_message=heard)
            except ResultTimeout:
                raise FanOutError(BATCH_LATE.format(texts=texts, seconds=timeout)) from None
            except (OperationalError, RedisError) as error:
                raise FanOutError(BROKER_LOST.format(error=error)) from error
            except RuntimeError as error:  # Celery's result consumer gave up reconnecting to Redis
                if not isinstance(error.__cause__, (OperationalError, RedisError, OSError)):
                    raise
                raise FanOutError(BROKER_LOST.format(error=error.__cause__)) from error
            if batch.result.state != states.SUCCESS:
                raise FanOutError(BATCH_FAILED.format(texts=texts, error=_failure(answer)))
            window.popleft()
            del out[batch.result.id]
            with contextlib.suppress(OperationalError, RedisError):
                batch.result.forget()  # half a megabyte a batch, which Redis would otherwise keep for an hour
            vectors = vectors_unpack(answer["vectors"])
            batch.embedding.fill(vectors)
            advance(batch, len(vectors))
            send()
            yield Embedded(batch.embedding.group, len(vectors), float(answer["seconds"]))
    finally:
        if out:  # not sent back yet: nobody will write them, so no worker need embed them
            _revoke(list(out))


def _revoke(task_ids: list[str]) -> None:
    """Revoke tasks if the broker answers at once; never wait on a broker that is away (revoking retries)."""
    with contextlib.suppress(OperationalError, RedisError), current_app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=0)
        current_app.control.revoke(task_ids, connection=connection)
