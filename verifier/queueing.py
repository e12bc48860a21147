"""Creating, requesting and requeueing verifications: getting an answer's check onto the Celery queue.

A verification is created pending, queued once the transaction that made the answer commits, and queued
again when it was left pending (the broker was away) or stuck running (its message lost). Running one is
`verifier.verifying`'s job.
"""

from __future__ import annotations

import datetime
import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from garden.models import Answer
from providers.timing import phase
from verifier.models import Verification, VerificationStatus

logger = logging.getLogger(__name__)


@phase("queueing")
def _enqueue(verification_id: int) -> None:
    from verifier.tasks import verify_answer

    try:
        # One quick attempt: with the broker away the answer must not wait for publish retries.
        verify_answer.apply_async((verification_id,), retry=False)
    except Exception:
        # The broker is down: the answer stands, the verification stays pending and is queued again later.
        logger.warning("could not queue verification %s; it stays pending", verification_id, exc_info=True)


def verification_create(*, answer: Answer) -> Verification | None:
    """A pending verification for a real answer; refusals, abstentions and failed answers have no claims (an
    abstention says only that the notes do not answer), so get none."""
    if answer.refused or answer.abstained or answer.failed:
        return None
    return Verification.objects.get_or_create(answer=answer)[0]


def verification_request(*, answer: Answer) -> Verification | None:
    """A pending verification for the answer, queued once the surrounding transaction commits."""
    verification = verification_create(answer=answer)
    if verification is not None:
        transaction.on_commit(lambda: _enqueue(verification.pk))
    return verification


def verifications_requeue(*, older_than: datetime.timedelta | None = None) -> int:
    """Queue again the verifications left pending (e.g. while Redis was down) and those stuck running for
    longer than a task may live (its message lost with a broker's data); returns how many.

    A verification queued twice is harmless: the second delivery finds it done or being run, and steps aside.
    """
    if older_than is None:
        older_than = datetime.timedelta(seconds=settings.VERIFIER_REQUEUE_AFTER_SECONDS)
    now = timezone.now()
    stuck = datetime.timedelta(seconds=settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"])
    ids = list(
        Verification.objects.filter(
            Q(status=VerificationStatus.PENDING, created_at__lt=now - older_than)
            | Q(status=VerificationStatus.RUNNING, started_at__lt=now - stuck)
        ).values_list("pk", flat=True)
    )
    for verification_id in ids:
        _enqueue(verification_id)
    return len(ids)
