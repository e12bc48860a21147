"""Rows (and garden folders) the tests need again and again."""

import re
from collections.abc import Mapping
from pathlib import Path

from django.contrib.auth.models import Group, User
from django.test import Client

from claimcheck.judges.claude import TOOL_NAME
from claimcheck.terms import ClaimStatus, JudgeMode, RiskLabel, Severity, Verdict
from garden.audiences import members_add
from garden.models import Answer, AnswerSource, Article, Generator, Passage, Question, Retrieval
from tests.fakes.messages_api import Behaviour, reply_tool
from verifier.models import Claim, CriticFinding, Verification, VerificationStatus, Vote
from verifier.queueing import verification_create
from verifier.verifying import verification_run

# From the sample garden's article on Ashcombe station.
STATION_ANSWER = (
    "The first public train of the preserved railway left Ashcombe for Millbridge on 3 May 1981 [1]."
)
STATION_QUOTE = "The first public train of the preserved railway left Ashcombe for Millbridge on 3 May 1981."
# The question STATION_ANSWER answers.
STATION_QUESTION = "When did the first public train of the preserved railway leave Ashcombe?"
# Another sentence of the Ashcombe station note, and a question near it that it does not answer (it gives no date).
STEP_FREE_QUOTE = (
    "Ashcombe is step-free throughout, with a lift to the footbridge and an accessible toilet next to the ticket "
    "office."
)
STEP_FREE_ANSWER = f"{STEP_FREE_QUOTE.removesuffix('.')} [1]."
LIFT_QUESTION = "When was the lift to the footbridge at Ashcombe station put in?"


def answer_for(text: str, *sources: Passage, question: str = "What does the garden say?") -> Answer:
    """A stored answer (as the extractive synthesiser would give it) citing `sources` as [1], [2], ..."""
    asked = Question.objects.create(
        text=question,
        preflight_domain="factual",
        preflight_risk="HIGH",
        preflight_suggestion="Check the cited passages.",
    )
    Retrieval.objects.create(question=asked)
    answer = Answer.objects.create(question=asked, text=text, generator=Generator.EXTRACTIVE)
    AnswerSource.objects.bulk_create(
        AnswerSource(answer=answer, number=number, passage=passage, score=1.0)
        for number, passage in enumerate(sources, start=1)
    )
    return answer


def verified_by_claude(
    quote: str, *, input_tokens: int = 900, output_tokens: int = 60, answers_question: bool = True
) -> Behaviour:
    """A Claude juror's reply that the answer's one claim is verified by `quote` from source 1 (and that it
    answers its question, as a juror given one must say)."""
    verdict = {
        "claim_number": 1,
        "status": "verified",
        "quote": quote,
        "source_number": 1,
        "confidence": 0.97,
        "flags": [],
    }
    return reply_tool(
        TOOL_NAME,
        {"verdicts": [verdict], "answers_question": answers_question},
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def verify_station_answer(
    question: str = STATION_QUESTION,
    *,
    answer: str = STATION_ANSWER,
    passage_with: str = "first public train",
) -> Verification:
    """Run the judge on a one-claim `answer` to `question` citing the Ashcombe station passage it comes from (the
    current one holding `passage_with`)."""
    passage = (
        Article.objects.get(slug="station-ashcombe")
        .revisions.get(superseded=False)
        .passages.get(text__contains=passage_with)
    )
    verification = verification_create(answer=answer_for(answer, passage, question=question))
    assert verification is not None
    verification_run(verification_id=verification.pk)
    return Verification.objects.get(pk=verification.pk)


def verify_step_free_answer(question: str = LIFT_QUESTION) -> Verification:
    """Run the judge on STEP_FREE_ANSWER, a grounded answer, to `question` (by default one it does not answer)."""
    return verify_station_answer(question, answer=STEP_FREE_ANSWER, passage_with="step-free")


def verification_with_claims(count: int) -> Verification:
    """A finished verification of an answer of `count` claims, each verified by a passage of its own article
    (the answer's source of the same number) with two jurors' votes, `local` and `claude-test`."""
    one_per_article = (
        Passage.objects.filter(is_current=True).order_by("article_id", "ordinal").distinct("article_id")
    )
    passages = list(one_per_article[:count])
    assert len(passages) == count, "the sample garden has fewer articles"
    sentences = [f"Claim {n} is in the garden [{n}]." for n in range(1, count + 1)]
    answer = answer_for(" ".join(sentences), *passages)
    verification = Verification.objects.create(
        answer=answer,
        status=VerificationStatus.DONE,
        mode=JudgeMode.LOCAL,
        verdict=Verdict.GROUNDED,
        risk_score=8,
        risk_label=RiskLabel.GROUNDED,
        judges=2,
    )
    CriticFinding.objects.create(
        verification=verification, critic_name="safety", severity=Severity.BLOCK, passed=True
    )
    start = 0
    for n, (passage, sentence) in enumerate(zip(passages, sentences, strict=True), start=1):
        claim = Claim.objects.create(
            verification=verification,
            ordinal=n,
            text=sentence,
            start=start,
            end=start + len(sentence),
            status=ClaimStatus.VERIFIED,
            quote=passage.text[:40],
            source_number=n,
            passage=passage,
            confidence=0.9,
        )
        Vote.objects.bulk_create(
            Vote(claim=claim, judge=judge, status=ClaimStatus.VERIFIED, confidence=0.9)
            for judge in ("local", "claude-test")
        )
        start += len(sentence) + 1
    return verification


def login(client: Client, role: str) -> User:
    """Sign `client` in as a new staff user of the group `role` (reader, editor, operator)."""
    user = User.objects.create_user(role, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    client.force_login(user)
    return user


def member(name: str, role: str, *audiences: str, staff: bool = False) -> tuple[User, Client]:
    """A new account `name` of the group `role`, in `audiences`, and a client signed in as it."""
    user = User.objects.create_user(name, password="x", is_staff=staff)
    user.groups.add(Group.objects.get(name=role))
    for audience in audiences:
        members_add(audience, [name])
    client = Client()
    client.force_login(user)
    return user, client


def garden_write(folder: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write a garden's notes (path in the garden -> text, or bytes as they are) under `folder`."""
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return folder


def page_text(html: str) -> str:
    """A page's HTML with its line breaks taken out: a run of whitespace is one space, and none is left between
    two tags. Templates are formatted one tag a line; an assertion on a page's words or on adjacent cells should
    not depend on where a template breaks its lines."""
    return re.sub(r">\s+<", "><", " ".join(html.split()))
