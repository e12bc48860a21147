"""The refusal gate calibrated by the garden itself, without a golden set: probes it cannot answer and probes it
can, the thresholds fitted to them as `retrieval_report.calibrate` fits them to a golden set.

Out-of-scope probes are general-knowledge questions from many fields, shipped with the project
(`garden/data/probes_out_of_scope.txt`). In-scope probes are made from the garden's own passages: a question
per sampled passage from its note's title and the heading the passage is under ("What about Boiler
certificates in Boiler inspections and washouts?"), or from the title alone for a passage under no heading.

Held out means: when a probe is asked, the passage it was made from is taken out of its candidates, so it never
counts as the hit that answers it, and nor do the topics and themes its words name (its note's own). The probe
then stands for a reader's question about a subject the garden covers, answered (or not) by the note's other
passages and by other notes, as a real question is answered by passages whose words it does not copy. Only passages of notes with at least two current passages are sampled: a
one-passage note held out leaves nothing of itself to find, a probe of nothing. Probes are asked as a reader of
the default audience, the one most questions come from.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Count, Q

from garden.answering.retrieval import Candidates, Thresholds
from garden.answering.retrieval_report import (
    HEADLINE,
    Observed,
    calibrate,
    calibration_store,
    held_out,
    measure,
    observe,
)
from garden.golden import OUT_OF_SCOPE, GoldenEntry
from garden.models import Article, CalibrationSource, Passage, RetrievalCalibration

logger = logging.getLogger(__name__)

PROBES_FILE = Path(__file__).resolve().parent.parent / "data" / "probes_out_of_scope.txt"
IN_SCOPE = "single_fact"  # the golden set's category an in-scope probe is measured as
SEED = 20261203  # the same garden is probed with the same sample, so two runs agree
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
NOTHING_TO_PROBE = (
    "Not calibrated: the garden has no note of two passages or more to make in-scope probes from."
)


@dataclass(frozen=True)
class Probe:
    """A question the gate is asked; `held_out` the passage (Passage id) it was made from, if any."""

    question: GoldenEntry
    held_out: int | None = None


def out_of_scope_load(path: Path = PROBES_FILE) -> list[str]:
    """The shipped out-of-scope probes: one question a line, `#` lines and blank lines left out."""
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def out_of_scope_probes(limit: int, path: Path = PROBES_FILE) -> list[Probe]:
    questions = out_of_scope_load(path)
    sampled = random.Random(SEED).sample(questions, min(limit, len(questions)))
    return [Probe(GoldenEntry(f"out-{n}", OUT_OF_SCOPE, q, ())) for n, q in enumerate(sampled)]


def heading_of(text: str) -> str | None:
    """The last heading a passage's text holds before its first sentence, or None."""
    found = _HEADING.findall(text)
    return found[-1].strip() if found else None


def probe_question(title: str, heading: str | None) -> str:
    return f"What about {heading} in {title}?" if heading and heading != title else f"What is {title}?"


def in_scope_probes(limit: int) -> list[Probe]:
    """Up to `limit` in-scope probes, a question per sampled passage of the live notes of two passages or more
    (the sample drawn from the passages' ids alone, so it stays fast on 50,000 notes)."""
    articles = (
        Article.objects.live()
        .annotate(current=Count("passages", filter=Q(passages__is_current=True)))
        .filter(current__gte=2)
        .values("id")
    )
    ids = list(
        Passage.objects.readable().filter(is_current=True, article__in=articles).values_list("id", flat=True)
    )
    sampled = random.Random(SEED).sample(ids, min(limit, len(ids)))
    rows = Passage.objects.filter(pk__in=sampled).values_list("id", "text", "article__title", "article__slug")
    return [
        Probe(GoldenEntry(f"in-{pk}", IN_SCOPE, probe_question(title, heading_of(text)), (slug,)), pk)
        for pk, text, title, slug in sorted(rows)
    ]


def probes_observe(probes: Sequence[Probe]) -> list[Observed]:
    """Each probe's candidates, with the passage it was made from held out (see the module's docstring)."""
    observed = observe([probe.question for probe in probes])
    return [
        replace(item, candidates=held_out_candidates(item.candidates, probe.held_out))
        if probe.held_out is not None
        else item
        for probe, item in zip(probes, observed, strict=True)
    ]


def held_out_candidates(candidates: Candidates, passage_id: int) -> Candidates:
    """An in-scope probe's candidates without the passage it was made from, and without the topics and themes
    its words name: they are its note's own title's, so they would let it through whatever the thresholds,
    and the thresholds would be fitted to the out-of-scope probes alone."""
    return replace(
        candidates,
        hits=[hit for hit in candidates.hits if hit.passage_id != passage_id],
        topic_ids=[],
        theme_ids=[],
        topic_article_ids=set(),
    )


@dataclass(frozen=True)
class SelfCalibration:
    thresholds: Thresholds
    figures: dict[str, Any]  # the probes' figures with the fitted thresholds
    configured: dict[str, Any]  # and with the settings' thresholds
    expected: dict[str, Any]  # on probes they were not fitted on (half the probes each way)
    probes: dict[str, int]


def self_calibrate(*, in_scope: int | None = None, out_of_scope: int | None = None) -> SelfCalibration:
    """Fit the gate's thresholds to probes of this garden; nothing is stored (`self_calibrate_store`).
    ValueError(NOTHING_TO_PROBE) when the garden has nothing to make in-scope probes from."""
    inside = in_scope_probes(settings.RETRIEVAL_PROBES_IN_SCOPE if in_scope is None else in_scope)
    if not inside:
        raise ValueError(NOTHING_TO_PROBE)
    outside = out_of_scope_probes(
        settings.RETRIEVAL_PROBES_OUT_OF_SCOPE if out_of_scope is None else out_of_scope
    )
    observed = probes_observe(inside + outside)
    missed, enough = settings.RETRIEVAL_PROBES_MISSED, settings.RETRIEVAL_PROBES_REFUSED
    thresholds = calibrate(observed, missed=missed, enough=enough)
    return SelfCalibration(
        thresholds=thresholds,
        figures=measure(observed, thresholds),
        configured=measure(observed, Thresholds.from_settings()),
        expected=held_out(observed, missed=missed, enough=enough),
        probes={"in_scope": len(inside), "out_of_scope": len(outside)},
    )


def self_calibrate_store(result: SelfCalibration) -> RetrievalCalibration:
    return calibration_store(
        result.thresholds,
        golden="",
        figures=result.figures,
        expected=result.expected,
        source=CalibrationSource.PROBES,
        probes={**result.probes, "configured": {key: result.configured[key] for key in HEADLINE}},
    )


def garden_self_calibrate() -> RetrievalCalibration | None:
    """What the task runs after a big import: calibrate on probes and store; None when there is nothing to probe."""
    try:
        return self_calibrate_store(self_calibrate())
    except ValueError:
        logger.info(NOTHING_TO_PROBE)
        return None
