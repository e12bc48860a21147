"""Celery tasks: thin shells that load ids and call one service."""

from __future__ import annotations

from celery import shared_task

from verifier.models import Verification, VerificationStatus


@shared_task(acks_late=True)
def verify_answer(verification_id: int) -> str:
    """For now the judge is not built: the verification waits, marked pending, for the claim-level judge."""
    verification = Verification.objects.filter(pk=verification_id).first()
    if verification is None:
        return "gone"
    return str(verification.status or VerificationStatus.PENDING)
