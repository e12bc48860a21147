"""Whether verifications can happen: the database, Redis, the workers seen lately, and how long answers have
waited for their verdict. Workers say they are alive with a heartbeat in Redis; operators read the outcome on
`/api/health` and the logs page, in words, with the settings that leave a check undone (a refused
CRITIC_SOURCE_TREE).
"""

from __future__ import annotations

import datetime
import logging
import threading
from dataclasses import dataclass, field

import redis
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Count, Min, Q
from django.utils import timezone

from garden.models import Sync
from verifier.models import Verification, VerificationStatus
from verifier.source_tree import SOURCE_TREE_REFUSED_UNNAMED, source_tree_refused

logger = logging.getLogger(__name__)

WORKERS_KEY = "groundwork:workers"  # a sorted set: worker name -> when it last beat (Redis's clock)
HEARTBEAT_EVERY_SECONDS = 10.0
SEEN_WITHIN_SECONDS = 60.0  # a worker that has not beaten for this long counts as gone

DATABASE_DOWN = "The database does not answer: questions cannot be answered."
REDIS_DOWN = "Redis does not answer: answers are still given, but their verifications wait until it is back."
NO_WORKER = "No worker has been seen in the last minute: verifications wait until one starts."
WORKERS_STUCK = (
    "Verifications are stuck: {stuck} waited more than {window} for the judge although workers are connected "
    "({workers} seen in the last minute). They take tasks but do not finish them; look at their logs."
)
SYNC_REFUSED = "The last garden sync changed nothing: {reason}"
# What callers who are not operators read instead: the reason names the garden's folder on the server.
SYNC_REFUSED_UNNAMED = "The last garden sync changed nothing; operators see why on the logs page."
NOTES_FAILED = (
    "{count} note(s) of the garden could not be imported; readers see none of them until they are fixed "
    "(listed under the garden's last sync)."
)


def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_connect_timeout=1, socket_timeout=1)


def _now(client: redis.Redis) -> float:
    """Redis's clock, which every machine shares (theirs may drift apart)."""
    seconds, micros = client.time()
    return seconds + micros / 1e6


def heartbeat(name: str) -> None:
    """Record that the worker `name` is alive now."""
    client = _redis()
    now = _now(client)
    with client.pipeline() as pipe:
        pipe.zadd(WORKERS_KEY, {name: now})
        pipe.zremrangebyscore(WORKERS_KEY, 0, now - 10 * SEEN_WITHIN_SECONDS)  # forget long-gone workers
        pipe.execute()


def heartbeat_stop(name: str) -> None:
    """A worker shutting down cleanly is gone at once, not a minute later."""
    _redis().zrem(WORKERS_KEY, name)


class Heartbeat(threading.Thread):
    """Beats every HEARTBEAT_EVERY_SECONDS in the background of a worker's main process, even while that
    process runs a task (a solo pool); a beat that cannot reach Redis is skipped, not fatal."""

    def __init__(self, name: str) -> None:
        super().__init__(name="groundwork-heartbeat", daemon=True)
        self.worker = name
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                heartbeat(self.worker)
            except redis.RedisError:
                logger.debug("heartbeat of %s skipped: Redis does not answer", self.worker)
            self.stopping.wait(HEARTBEAT_EVERY_SECONDS)

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=5)
        try:
            heartbeat_stop(self.worker)
        except redis.RedisError:
            logger.debug("could not remove %s from the workers seen", self.worker)


def workers_seen() -> list[str]:
    """Names of the workers that beat within the last SEEN_WITHIN_SECONDS."""
    client = _redis()
    names = client.zrangebyscore(WORKERS_KEY, _now(client) - SEEN_WITHIN_SECONDS, "+inf")
    return sorted(name.decode() for name in names if isinstance(name, bytes))


def duration_words(seconds: float) -> str:
    """'45 seconds', '3 minutes', '2 hours'."""
    if seconds < 120:
        return f"{seconds:.0f} second{'' if round(seconds) == 1 else 's'}"
    if seconds < 2 * 3600:
        return f"{round(seconds / 60)} minutes"
    return f"{round(seconds / 3600)} hours"


@dataclass(frozen=True)
class Health:
    database: bool
    redis: bool
    workers: list[str]
    waiting: int  # verifications pending or running
    stuck: int  # of those, how many have waited longer than the requeue window
    oldest_waiting: datetime.timedelta | None
    problems: list[str] = field(default_factory=list)
    sync: Sync | None = None  # the garden's last sync: what it refused, and the notes it could not import

    @property
    def oldest_waiting_words(self) -> str:
        return duration_words(self.oldest_waiting.total_seconds()) if self.oldest_waiting is not None else ""

    @property
    def status(self) -> str:
        """`down` when questions cannot be answered, `degraded` when verdicts are held up, else `ok`."""
        if not self.database:
            return "down"
        return "degraded" if self.problems else "ok"


def _database_answers() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except DatabaseError:
        return False


def health_check() -> Health:
    """The state of everything a verification needs, with each problem said in words."""
    problems: list[str] = []
    database = _database_answers()
    waiting, stuck, oldest = 0, 0, None
    sync = None
    if database:
        sync = Sync.objects.first()
        if sync is not None and sync.refused:
            problems.append(SYNC_REFUSED.format(reason=sync.refused))
        if sync is not None and sync.failures:
            problems.append(NOTES_FAILED.format(count=len(sync.failures)))
        if source_tree_refused():
            problems.append(SOURCE_TREE_REFUSED_UNNAMED)
        now = timezone.now()
        window = datetime.timedelta(seconds=settings.VERIFIER_REQUEUE_AFTER_SECONDS)
        counts = Verification.objects.filter(
            status__in=[VerificationStatus.PENDING, VerificationStatus.RUNNING]
        ).aggregate(
            waiting=Count("pk"),
            stuck=Count("pk", filter=Q(created_at__lt=now - window)),
            first=Min("created_at"),
        )
        waiting, stuck = counts["waiting"], counts["stuck"]
        oldest = now - counts["first"] if counts["first"] else None
    else:
        problems.append(DATABASE_DOWN)
    try:
        workers = workers_seen()
        redis_up = True
    except redis.RedisError:
        workers, redis_up = [], False
        problems.append(REDIS_DOWN)
    if redis_up and not workers:
        problems.append(NO_WORKER)
    if stuck and workers:
        problems.append(
            WORKERS_STUCK.format(
                stuck=stuck,
                window=duration_words(settings.VERIFIER_REQUEUE_AFTER_SECONDS),
                workers=len(workers),
            )
        )
    return Health(database, redis_up, workers, waiting, stuck, oldest, problems, sync)
