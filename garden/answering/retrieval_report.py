"""Measuring retrieval and the refusal gate on the golden set, and calibrating the hit thresholds.

recall@5: the share of a question's expected articles among the first five counted articles, averaged over
in-scope questions. The gate is judged by the share of out-of-scope questions it refuses (the recall of its
refusals), the share of its refusals that were out of scope (their precision) and the share of in-scope
questions it answers. `calibration_store` keeps calibrated thresholds where the gate reads them; `rerank_measure`
gives recall@5 with a served re-ranker and without it.
"""

from __future__ import annotations

import zlib
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from garden.answering.reranking import reranked
from garden.answering.retrieval import Candidates, RetrievalResult, Thresholds, gather, select
from garden.golden import UNANSWERABLE, GoldenEntry
from garden.models import Article, CalibrationSource, Passage, RetrievalCalibration
from garden.readers import ANONYMOUS, Reader
from providers import embeddings
from providers.rerank import RerankConfig

RECALL_AT = 5
# What a calibration is judged by, on the golden set and on held-out halves of it.
HEADLINE = ("out_of_scope_refused", "in_scope_answered", "refusal_precision", "recall_at_5")


@dataclass(frozen=True)
class Observed:
    question: GoldenEntry
    candidates: Candidates


def observe(questions: Sequence[GoldenEntry], reader: Reader = ANONYMOUS) -> list[Observed]:
    """Gather candidates for every question once, of what `reader` may read; thresholds are applied afterwards,
    as often as needed."""
    vectors = embeddings.embed([q.question for q in questions])
    return [
        Observed(q, gather(q.question, vector, reader=reader))
        for q, vector in zip(questions, vectors, strict=True)
    ]


def slugs_of_candidates(observed: Sequence[Observed]) -> dict[int, str]:
    """The address of every article the observed questions' candidates are in: what `measure` compares with
    the golden set's expected articles, read once for the many thresholds `calibrate` tries."""
    found = {hit.article_id for item in observed for hit in item.candidates.hits}
    return dict(Article.objects.filter(pk__in=found).values_list("id", "slug"))


class Selections:
    """What `select` counts of each observed question at any thresholds, each selection made once: which hits
    count depends only on how many of the question's vector scores, and how many of its text scores, reach the
    thresholds, so the many settings `calibrate` tries share a few selections per question."""

    def __init__(self, observed: Sequence[Observed]) -> None:
        self.observed = observed
        self.scores = [
            (
                sorted(hit.vector_score for hit in item.candidates.hits),
                sorted(hit.text_score for hit in item.candidates.hits),
            )
            for item in observed
        ]
        self.made: list[dict[tuple[int, int], RetrievalResult]] = [{} for _ in observed]

    def at(self, thresholds: Thresholds) -> list[RetrievalResult]:
        results = []
        for item, (vectors, texts), made in zip(self.observed, self.scores, self.made, strict=True):
            reached = (bisect_left(vectors, thresholds.vector), bisect_left(texts, thresholds.text))
            if reached not in made:
                made[reached] = _selected(item, thresholds)
            results.append(made[reached])
        return results


def _selected(item: Observed, thresholds: Thresholds) -> RetrievalResult:
    # The counted articles alone are judged: no sources are chosen.
    return select(item.candidates, thresholds, max_articles=RECALL_AT, max_sources=0)


def measure(
    observed: Sequence[Observed],
    thresholds: Thresholds,
    slugs: dict[int, str] | None = None,
    selections: Selections | None = None,
) -> dict[str, Any]:
    """The gate's and retrieval's figures at `thresholds`; `slugs`: the candidates' addresses, when already
    read (`slugs_of_candidates`); `selections`: the questions' selections, when made for other thresholds."""
    if selections is None:
        results = [_selected(item, thresholds) for item in observed]
    else:
        results = selections.at(thresholds)
    if slugs is None:
        counted = {a.article_id for result in results for a in result.articles}
        slugs = dict(Article.objects.filter(pk__in=counted).values_list("id", "slug"))
    recalls: list[float] = []
    refused_out = refused_in = total_out = total_in = 0
    per_category: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"recall": [], "refused": []})
    for item, result in zip(observed, results, strict=True):
        refused = result.empty
        category = per_category[item.question.category]
        category["refused"].append(float(refused))
        if item.question.category == UNANSWERABLE:
            continue  # refused or passed to an abstention, either is right: the gate is not judged on it
        if item.question.in_scope:
            total_in += 1
            refused_in += refused
            expected = set(item.question.expected_articles)
            if expected:
                found = {slugs.get(a.article_id) for a in result.articles[:RECALL_AT]}
                recall = len(expected & found) / len(expected)
                recalls.append(recall)
                category["recall"].append(recall)
        else:
            total_out += 1
            refused_out += refused
    return {
        "thresholds": {"vector": round(thresholds.vector, 3), "text": round(thresholds.text, 3)},
        "questions": len(observed),
        "recall_at_5": round(float(np.mean(recalls)), 3) if recalls else None,
        "out_of_scope_refused": round(refused_out / total_out, 3) if total_out else None,
        "in_scope_wrongly_refused": round(refused_in / total_in, 3) if total_in else None,
        "in_scope_answered": round(1 - refused_in / total_in, 3) if total_in else None,
        "refusal_precision": round(refused_out / (refused_out + refused_in), 3)
        if refused_out + refused_in
        else None,
        "per_category": {
            name: {
                "questions": len(values["refused"]),
                "recall_at_5": round(float(np.mean(values["recall"])), 3) if values["recall"] else None,
                "refused": round(float(np.mean(values["refused"])), 3),
            }
            for name, values in sorted(per_category.items())
        },
    }


def rerank_measure(
    observed: Sequence[Observed], thresholds: Thresholds, config: RerankConfig
) -> dict[str, Any]:
    """recall@5 at `thresholds` with the candidates in the hybrid order and in the re-ranker's (`config`), and
    how many questions it ordered (those the gate lets through, less any it failed on: the log says why)."""
    ordered = [
        Observed(item.question, reranked(item.question.question, item.candidates, thresholds, config))
        for item in observed
    ]
    return {
        "model": config.model,
        "recall_at_5_without": measure(observed, thresholds)["recall_at_5"],
        "recall_at_5": measure(ordered, thresholds)["recall_at_5"],
        "reranked_questions": sum(bool(item.candidates.reranked_by) for item in ordered),
    }


def calibrate(observed: Sequence[Observed], *, missed: float = 0.0, enough: float = 1.0) -> Thresholds:
    """The thresholds that get the most questions right (out-of-scope ones refused, in-scope ones answered)
    refusing no more than `missed` of the in-scope ones (or as few more as can be), then recall best.

    `missed`: the share of in-scope questions they may refuse (0 for a golden set, whose questions the garden
    answers; more for the probes of `self_calibration`, some of which it cannot once held out). Within it, a
    share of out-of-scope questions refused is worth as much as the same share of in-scope ones answered: the
    thresholds with the most right win, so one weak in-scope probe does not open the gate to many
    general-knowledge ones, nor are readers' questions given up for a few such probes no thresholds keep out
    (on a large garden some come in by its own names). `enough`: the share of out-of-scope questions refused
    beyond which refusing more is worth nothing (1 for a golden set; less for probes: a general-knowledge
    question is not out of scope for every garden). Among equally good settings the one in the middle of the
    widest such range is taken, for a safety margin.
    """
    best_key: tuple[float, ...] | None = None
    best: list[Thresholds] = []
    slugs, selections = slugs_of_candidates(observed), Selections(observed)
    for vector in np.arange(0.20, 0.70, 0.01):
        for text in np.arange(0.30, 1.05, 0.05):
            thresholds = Thresholds(vector=round(float(vector), 2), text=round(float(text), 2))
            figures = measure(observed, thresholds, slugs, selections)
            refused = min(figures["out_of_scope_refused"] or 0.0, enough)
            answered = figures["in_scope_answered"] or 0.0
            key = (
                -max((figures["in_scope_wrongly_refused"] or 0.0) - missed, 0.0),
                round(refused + answered, 3),
                figures["recall_at_5"] or 0.0,
            )
            if best_key is None or key > best_key:
                best_key, best = key, [thresholds]
            elif key == best_key:
                best.append(thresholds)
    vectors = sorted({t.vector for t in best})
    texts = sorted({t.text for t in best})
    middle = Thresholds(vector=vectors[len(vectors) // 2], text=texts[len(texts) // 2])
    return middle if middle in best else best[len(best) // 2]


def held_out(observed: Sequence[Observed], *, missed: float = 0.0, enough: float = 1.0) -> dict[str, Any]:
    """What calibration may be expected to do on questions it was not fitted on: the golden set cut in two
    by a hash of each question's id, thresholds fitted on each half and measured on the other, the two
    halves' figures averaged (in-scope and out-of-scope questions are few: the fitted half's own figures
    flatter it)."""
    halves: list[list[Observed]] = [[], []]
    for item in observed:
        halves[zlib.crc32(item.question.id.encode()) % 2].append(item)
    figures = [
        measure(halves[1 - n], calibrate(halves[n], missed=missed, enough=enough))
        for n in (0, 1)
        if halves[0] and halves[1]
    ]
    return {
        key: round(float(np.mean(values)), 3)
        if (values := [f[key] for f in figures if f[key] is not None])
        else None
        for key in HEADLINE
    }


def calibration_store(
    thresholds: Thresholds,
    *,
    golden: str,
    figures: dict[str, Any],
    expected: dict[str, Any],
    source: CalibrationSource = CalibrationSource.GOLDEN,
    probes: dict[str, Any] | None = None,
) -> RetrievalCalibration:
    """Keep calibrated thresholds where the gate reads them, for the embedder that runs now, with the figures
    they had on the questions they were fitted on (`figures`: the golden set's, or the probes' with `source`
    PROBES and how many were asked in `probes`) and those expected on questions they were not fitted on."""
    fitted_on = "golden_set" if source == CalibrationSource.GOLDEN else "probes"
    return RetrievalCalibration.objects.create(
        vector_threshold=thresholds.vector,
        text_threshold=thresholds.text,
        embedded_by=embeddings.embedder(),
        golden=golden,
        source=source,
        passages=Passage.objects.filter(is_current=True).count(),
        expected={
            fitted_on: {key: figures[key] for key in HEADLINE},
            "held_out": expected,
            **({"asked": probes} if probes else {}),
        },
    )
