"""Asking stores the answer and queues its verification once the transaction commits."""

import base64
import json
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from dashboard.actions.asking import ask
from verifier.models import Verification, VerificationStatus
from verifier.queueing import verifications_requeue

# They read the broker's queue itself, so no Celery worker may be consuming it: a test process that has started
# the session's worker (`celery_worker`) for an earlier test would take the message before it is looked for.
# `make test` runs the `alone` tests before the others, in a process of their own.
pytestmark = [pytest.mark.django_db, pytest.mark.alone]


def queued_verifications(client: redis.Redis) -> list[int]:
    messages = [json.loads(raw) for raw in client.lrange("celery", 0, -1)]
    return [
        json.loads(base64.b64decode(m["body"]))[0][0]
        for m in messages
        if m["headers"]["task"] == "verifier.tasks.verify_answer"
    ]


def test_a_verification_is_queued_on_commit_and_not_before(django_capture_on_commit_callbacks):
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        answer = ask("When did Ashcombe station reopen?")
    verification = Verification.objects.get(answer=answer)
    assert verification.status == VerificationStatus.PENDING
    assert verification.pk not in queued_verifications(client)

    for callback in callbacks:
        callback()
    assert verification.pk in queued_verifications(client)


def test_refusals_have_nothing_to_verify(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        answer = ask("How do I bake sourdough bread at home?")
    assert answer.refused and not Verification.objects.filter(answer=answer).exists()


def test_verifications_left_pending_are_queued_again(django_capture_on_commit_callbacks):
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    with django_capture_on_commit_callbacks(execute=False):
        answer = ask("When did Ashcombe station reopen?")  # the broker "missed" it: callbacks never ran
    verification = Verification.objects.get(answer=answer)
    Verification.objects.filter(pk=verification.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert verification.pk not in queued_verifications(client)

    assert verifications_requeue() >= 1
    assert verification.pk in queued_verifications(client)


def test_a_verification_stuck_running_longer_than_a_task_may_live_is_queued_again(
    django_capture_on_commit_callbacks,
):
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    with django_capture_on_commit_callbacks(execute=False):
        stuck = Verification.objects.get(answer=ask("When did Ashcombe station reopen?"))
        busy = Verification.objects.get(answer=ask("What gauge is the railway?"))
    lifetime = timedelta(seconds=settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"])
    Verification.objects.filter(pk=stuck.pk).update(
        status=VerificationStatus.RUNNING, started_at=timezone.now() - lifetime - timedelta(minutes=1)
    )
    Verification.objects.filter(pk=busy.pk).update(
        status=VerificationStatus.RUNNING, started_at=timezone.now()
    )

    verifications_requeue()
    queued = queued_verifications(client)
    assert stuck.pk in queued and busy.pk not in queued
