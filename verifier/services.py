"""Queueing and running verifications."""

from __future__ import annotations

import logging

from django.db import transaction

from garden.models import Answer
from verifier.models import Verification

logger = logging.getLogger(__name__)


def _enqueue(verification_id: int) -> None:
    from verifier.tasks import verify_answer

    try:
        verify_answer.delay(verification_id)
    except Exception:
        # The broker is down: the answer stands, the verification stays pending and is queued again later.
        logger.warning("could not queue verification %s; it stays pending", verification_id, exc_info=True)


def verification_request(*, answer: Answer) -> Verification | None:
    """A pending verification for a real answer, queued once the surrounding transaction commits.

    Refusals and failed answers have no claims to check, so they get none.
    """
    if answer.refused or answer.failed:
        return None
    verification, _ = Verification.objects.get_or_create(answer=answer)
    transaction.on_commit(lambda: _enqueue(verification.pk))
    return verification
