"""The face's one entry point for a question: ask the garden, then ask the verifier to check the answer."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from garden.answering import question_ask
from garden.models import Answer
from verifier.queueing import verification_request


def ask(text: str | None, user: AbstractBaseUser | AnonymousUser | None = None) -> Answer:
    """Answer the question and queue its verification once the answer is committed.

    Raises `garden.answering.QuestionError` for an empty or over-long question.
    """
    with transaction.atomic():
        answer = question_ask(text=text, user=user)
        verification_request(answer=answer)
    return answer
