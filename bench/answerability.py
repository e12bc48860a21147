"""Answers that answer: how often an answer gives the fact when the notes hold it, and abstains when they do not.

Two gardens. SQuAD 2.0's article "Computational complexity theory" (`squad2_complexity.json` in the shared
evaluation folder: 48 paragraphs, 418 questions, 221 of them written to look answerable while the text does not
answer them) is imported as a garden of one note a paragraph, and each question is asked of the whole garden, as
a reader would: an answerable question is answered with the fact when SQuAD's normalised answer is inside the
answer's text; an unanswerable one is abstained on when the answer is an abstention or retrieval's refusal. And
the sample garden's golden set, scored as Verify-all scores it (`claimcheck.answer_scoring`), where the
`unanswerable` category (notes about the subject that do not say what is asked) must be abstained on and the
in-scope questions must keep their answers.

Each garden is asked twice in one run, with the answerability step and without it (the synthesiser's best-ranked
sentence first, as before the step), so the two are compared on the same machine and data. Each share comes
with its 95 % interval over resampled questions: the spread a different sample of questions would give.
"""

from __future__ import annotations

import json
import random
import re
import string
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.test import override_settings

from claimcheck.answer_scoring import score_answer
from claimcheck.answerability import Support
from evaluation.audiences import reader_as
from garden.answering.asking import question_ask
from garden.golden import OUT_OF_SCOPE, UNANSWERABLE, GoldenEntry
from garden.models import Answer, Article
from garden.sync import garden_import

SQUAD_FILE = "squad2_complexity.json"
# Questions asked of each half (answerable, unanswerable) at the smallest size, CI's smoke run.
SMALLEST_QUESTIONS = 3
RESAMPLES = 1000
SEED = 46
# The synthesiser's sentence chooser without the step: its best-ranked sentence answers, whatever it says.
WITHOUT_STEP = "bench.answerability.first_sentence"


def first_sentence(question: str, sentences: Sequence[tuple[str, str]]) -> Support | None:
    """The sentence chooser as it was before the answerability step: the best-ranked sentence answers."""
    return Support(0, 1.0) if sentences else None


def squad_normalised(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation)
    return " ".join(re.sub(r"\b(?:a|an|the)\b", " ", text).split())


def gives_fact(answer: str, facts: Sequence[str]) -> bool:
    """Whether `answer` holds one of SQuAD's answers to its question, both normalised."""
    said = squad_normalised(answer)
    return any(squad_normalised(fact) in said for fact in facts)


def _interval(hits: Sequence[bool], rng: random.Random) -> list[float] | None:
    """The 95 % interval of the share of `hits` over questions resampled with replacement."""
    if not hits:
        return None
    shares = sorted(sum(rng.choices(hits, k=len(hits))) / len(hits) for _ in range(RESAMPLES))
    return [round(shares[int(0.025 * RESAMPLES)], 3), round(shares[int(0.975 * RESAMPLES) - 1], 3)]


def _share(hits: Sequence[bool], rng: random.Random) -> dict[str, Any]:
    return {
        "share": round(sum(hits) / len(hits), 3) if hits else None,
        "of": len(hits),
        "interval_95": _interval(hits, rng),
    }


def _not_answered(answer: Answer) -> bool:
    """An abstention or a refusal: the reader is told the notes do not answer."""
    return answer.abstained or answer.refused


@contextmanager
def _squad_garden(paragraphs: Sequence[str], title: str) -> Iterator[None]:
    """The article's paragraphs imported as a garden of one note each, taken out again after."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "squad"
        folder.mkdir()
        for number, paragraph in enumerate(paragraphs, start=1):
            note = f'---\ntitle: "{title}, part {number}"\n---\n\n{paragraph}\n'
            (folder / f"part-{number:02d}.md").write_text(note, encoding="utf-8")
        garden_import([folder])
        garden = str(folder.resolve())
        try:
            yield
        finally:  # the answers first: a passage an answer cited is kept while the answer is
            Answer.objects.filter(sources__passage__article__garden=garden).delete()
            Article.objects.filter(garden=garden).delete()


def squad_sample(questions: Sequence[dict[str, Any]], per_half: int | None) -> list[dict[str, Any]]:
    """All the questions, or `per_half` of each half (answerable, unanswerable), seeded."""
    if per_half is None:
        return list(questions)
    rng = random.Random(SEED)
    halves = [[q for q in questions if q["answerable"] is answerable] for answerable in (True, False)]
    return [q for half in halves for q in rng.sample(half, min(per_half, len(half)))]


def _squad_scores(questions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    rng = random.Random(SEED)
    fact: list[bool] = []
    abstained: list[bool] = []
    unanswerable: list[bool] = []
    for question in questions:
        answer = question_ask(text=question["question"])
        if question["answerable"]:
            fact.append(not _not_answered(answer) and gives_fact(answer.text, question["answers"]))
            abstained.append(_not_answered(answer))
        else:
            unanswerable.append(_not_answered(answer))
    answered, held = _share(fact, rng), _share(unanswerable, rng)
    return {
        "answerable_answered_with_fact": answered,
        "answerable_abstained": _share(abstained, rng),
        "unanswerable_abstained": held,
        "mean": round((answered["share"] + held["share"]) / 2, 3) if fact and unanswerable else None,
    }


def bench_squad(path: Path, per_half: int | None) -> dict[str, Any]:
    """SQuAD 2.0's article as a garden, its questions asked with the answerability step and without it."""
    data = json.loads(path.read_text(encoding="utf-8"))
    questions = squad_sample(data["questions"], per_half)
    with _squad_garden(data["paragraphs"], data["title"]):
        return {
            "file": str(path),
            "notes": len(data["paragraphs"]),
            "with_step": _squad_scores(questions),
            "without_step": _with_chooser(WITHOUT_STEP, _squad_scores, questions),
        }


def _golden_scores(questions: Sequence[GoldenEntry]) -> dict[str, Any]:
    rng = random.Random(SEED)
    in_scope: list[bool] = []
    unanswerable: list[bool] = []
    per_category: dict[str, Counter[str]] = {}
    for entry in questions:
        answer = question_ask(text=entry.question, reader=reader_as(entry.audience))
        counts = per_category.setdefault(entry.category, Counter())
        counts["questions"] += 1
        counts["abstained"] += answer.abstained
        counts["refused"] += answer.refused
        if entry.category == UNANSWERABLE:
            unanswerable.append(_not_answered(answer))
            continue
        checked = score_answer(
            answer=answer.text,
            expected=entry.answer,
            question=entry.question,
            in_scope=entry.category != OUT_OF_SCOPE,
            refused=answer.refused,
            outdated_fact=entry.outdated_fact,
        ).answers
        counts["answered"] += bool(checked)
        if entry.category != OUT_OF_SCOPE and checked is not None:
            in_scope.append(checked)
    return {
        "in_scope_answered": _share(in_scope, rng),
        "unanswerable_abstained": _share(unanswerable, rng),
        "per_category": {category: dict(counts) for category, counts in sorted(per_category.items())},
    }


def bench_golden(questions: Sequence[GoldenEntry]) -> dict[str, Any]:
    """The sample garden's golden set, asked with the answerability step and without it."""
    return {
        "with_step": _golden_scores(questions),
        "without_step": _with_chooser(WITHOUT_STEP, _golden_scores, questions),
    }


def _with_chooser(chooser: str, score: Callable[[Any], dict[str, Any]], questions: Any) -> dict[str, Any]:
    with override_settings(ANSWERING_SENTENCE=chooser):
        return score(questions)


def bench_answerability(
    golden: Sequence[GoldenEntry], per_half: int | None, squad: Path | None = None
) -> dict[str, Any]:
    """The golden set's figures, then SQuAD's (skipped, saying so, when its file is not there)."""
    path = squad or Path(settings.JUDGE_EVAL_DIR) / SQUAD_FILE
    report: dict[str, Any] = {"golden": bench_golden(golden)}
    if path.is_file():
        report["squad"] = bench_squad(path, per_half)
    else:
        report["squad"] = {"skipped": f"{path} is not there (the shared evaluation folder)."}
    return report
