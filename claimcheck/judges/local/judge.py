"""The local judge: one ruling per claim from its alignment to every source, then the item-level outcome."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from claimcheck.claims import Sentence, split_claims
from claimcheck.judges.local.alignment import Alignment, align
from claimcheck.judges.local.binding import WrongSubject, check_subject, context_stems, subject_words
from claimcheck.judges.local.encoding import Text, encode
from claimcheck.judges.local.model import FEATURE_NAMES, contradiction_rule, params, supported_probability
from claimcheck.judges.local.sources import Prepared, prepare_sources
from claimcheck.judges.types import Ruling, Source
from claimcheck.terms import CONTRADICTION_FLAGS, NOT_SUPPORTED, ClaimStatus, Flag
from text.markup import strip_citations

_ALIGNED_RISK: Final = FEATURE_NAMES.index("aligned_word_risk")
# Which status and flags a claim gets once the calibrated model has spoken: the thresholds below are hand-set, not
# fitted by calibration (which sets `threshold`, `verified_threshold` and `edit_threshold` in params.json).
# A claim judged against no source at all is unverified with this confidence: there is nothing it could rest on.
NO_SOURCE_CONFIDENCE: Final = 0.9
# Verified (stated by the source) rather than inferred needs the closest passages to hold most of the claim's
# content words, or to say nearly the same thing; below both, the support is a paraphrase or an inference.
DIRECT_COVERAGE: Final = 0.8
DIRECT_COSINE: Final = 0.85
# A rule (not the probability) decides a contradiction or an edit, so its confidence is at least even.
RULE_CONFIDENCE: Final = 0.5
# Below these a passage is about something else, and its mismatches are not worth naming as flags.
RELATED_COSINE: Final = 0.4
RELATED_COVERAGE: Final = 0.4
# An unsupported claim's closest passage below this cosine is on another point: the low-similarity flag.
LOW_SIMILARITY_COSINE: Final = 0.5
# The claim is not in the sources when its closest passages hold less than half its content words, or when even
# the closest is about something else (below RELATED_COSINE).
NOT_IN_SOURCES_COVERAGE: Final = 0.5


@dataclass(frozen=True)
class JudgedText:
    """A whole text judged: its claims, one vote per checkable claim, and the item-level outcome."""

    claims: tuple[Sentence, ...]
    votes: tuple[Ruling, ...]
    probability: float  # that every claim is supported (the weakest claim's probability)
    supported: bool  # no vote is unverified, misattributed or contradicted, and there is at least one vote


@dataclass(frozen=True)
class _Assessment:
    source_position: int
    probability: float
    alignment: Alignment


def _vote(
    claim: Sentence,
    analysed: Text,
    sources: Sequence[Source],
    prepared: Sequence[Prepared],
    contexts: Sequence[frozenset[str]],
) -> Ruling:
    """One claim's vote: best support said of the claim's own subject, then misattribution, outdatedness and
    contradiction rules."""
    if not sources:
        return Ruling(ClaimStatus.UNVERIFIED, "", None, NO_SOURCE_CONFIDENCE, (Flag.NOT_IN_SOURCES,))
    assessments = []
    for position, (source, context) in enumerate(zip(prepared, contexts, strict=True)):
        known = subject_words(analysed, source) & context - source.stems if context else frozenset()
        alignment = align(analysed, source, known)
        probability = float(supported_probability(alignment.features))
        assessments.append(_Assessment(position, probability, alignment))
    supported = [
        a
        for a in assessments
        if a.probability >= params().threshold
        and not _contradicting(a)
        and not _edited(a)
        and not a.alignment.reversed
    ]
    # A passage that says the claim of another subject supports nothing (binding.py has the rule); any source
    # may say it so, the one that matches best or another.
    wrong = {
        a.source_position: check_subject(analysed, prepared[a.source_position], contexts[a.source_position])
        for a in assessments
    }
    moved = [found for found in wrong.values() if found is not None]
    # "Fellside station has a footbridge" from Millbridge's sentence in [1]: Fellside's own passage in [2] must
    # hold the footbridge too, or it is a near match that says nothing of it.
    said_of_subject = [
        a
        for a in supported
        if wrong[a.source_position] is None
        and not any(found.is_absent_from(prepared[a.source_position]) for found in moved)
    ]
    if said_of_subject:
        return _supported_ruling(claim, said_of_subject, sources, prepared)
    if moved:
        return _wrong_subject_ruling(claim, assessments, wrong, sources, prepared)
    return _unsupported_ruling(assessments, sources, prepared)


def _supported_ruling(
    claim: Sentence, supported: Sequence[_Assessment], sources: Sequence[Source], prepared: Sequence[Prepared]
) -> Ruling:
    """The ruling of a claim some source supports: the cited current source first, then any current one
    (misattributed when the claim cites another), then a superseded one (outdated)."""
    current = [a for a in supported if not sources[a.source_position].superseded]
    cited = [a for a in current if sources[a.source_position].index in claim.citations]
    if cited:
        chosen, status = max(cited, key=lambda a: a.probability), None
    elif current and claim.citations:
        chosen, status = max(current, key=lambda a: a.probability), ClaimStatus.MISATTRIBUTED
    elif current:
        chosen, status = max(current, key=lambda a: a.probability), None
    else:
        chosen, status = max(supported, key=lambda a: a.probability), ClaimStatus.OUTDATED
    extra: tuple[str, ...] = ()
    if status == ClaimStatus.MISATTRIBUTED:
        extra = (Flag.OTHER_SOURCE,)
    elif status == ClaimStatus.OUTDATED:
        extra = (Flag.SUPERSEDED,)
    if status is None:
        extra = tuple(f for f in chosen.alignment.flags if f in CONTRADICTION_FLAGS)
        direct = (
            chosen.probability >= params().verified_threshold
            and (
                chosen.alignment.coverage_top >= DIRECT_COVERAGE or chosen.alignment.cos_best >= DIRECT_COSINE
            )
            and not any(flag in CONTRADICTION_FLAGS for flag in chosen.alignment.flags)
        )
        status = ClaimStatus.VERIFIED if direct else ClaimStatus.INFERRED
        if not claim.citations and len(sources) > 1:
            extra = (*extra, Flag.UNCITED)
    origin = sources[chosen.source_position]
    quote = prepared[chosen.source_position].quote(chosen.alignment.best_piece)
    return Ruling(status, quote, origin.index, round(chosen.probability, 4), extra)


def _wrong_subject_ruling(
    claim: Sentence,
    assessments: Sequence[_Assessment],
    wrong: dict[int, WrongSubject | None],
    sources: Sequence[Source],
    prepared: Sequence[Prepared],
) -> Ruling:
    """The ruling of a claim that a source says of another subject, and none of its own: contradicted when the
    source gives its own subject another figure, else misattributed (the garden says it, of something else); the
    quote shows the passage that says so."""
    said_of_another = [a for a in assessments if wrong[a.source_position] is not None]
    cited = [a for a in said_of_another if sources[a.source_position].index in claim.citations]
    chosen = max(cited or said_of_another, key=lambda a: a.probability)
    found = wrong[chosen.source_position]
    assert found is not None
    piece = found.piece if found.piece >= 0 else chosen.alignment.best_piece
    status = ClaimStatus.CONTRADICTED if found.contradicted else ClaimStatus.MISATTRIBUTED
    quote = prepared[chosen.source_position].quote(piece)
    confidence = round(max(RULE_CONFIDENCE, chosen.probability), 4)
    return Ruling(status, quote, sources[chosen.source_position].index, confidence, found.flags)


def _unsupported_ruling(
    assessments: Sequence[_Assessment], sources: Sequence[Source], prepared: Sequence[Prepared]
) -> Ruling:
    """The ruling of a claim no source supports: contradicted when a well-aligned passage disagrees, else
    unverified, with the reasons a reader can check."""
    best = max(assessments, key=lambda a: (a.alignment.cos_best + a.alignment.coverage_top, a.probability))
    alignment = best.alignment
    origin = sources[best.source_position]
    quote = prepared[best.source_position].quote(alignment.best_piece) if alignment.best_piece >= 0 else ""
    confidence = round(1.0 - best.probability, 4)
    if _contradicting(best) or alignment.reversed:
        confidence = max(confidence, RULE_CONFIDENCE)
        return Ruling(ClaimStatus.CONTRADICTED, quote, origin.index, confidence, alignment.flags)
    flags = list(alignment.flags)
    if _edited(best):
        confidence = max(confidence, RULE_CONFIDENCE)
        flags.append(Flag.NOVEL_CONTENT)
    if alignment.cos_best < RELATED_COSINE and alignment.coverage_top < RELATED_COVERAGE:
        # Without a passage on the same subject no source "says otherwise": only the novelty is worth naming.
        flags = [f for f in flags if f not in CONTRADICTION_FLAGS]
    if alignment.cos_best < LOW_SIMILARITY_COSINE:
        flags.append(Flag.LOW_SIMILARITY)
    if alignment.coverage_top < NOT_IN_SOURCES_COVERAGE or alignment.cos_best < RELATED_COSINE:
        flags.append(Flag.NOT_IN_SOURCES)
    return Ruling(ClaimStatus.UNVERIFIED, quote, origin.index, confidence, tuple(dict.fromkeys(flags)))


def _edited(assessment: _Assessment) -> bool:
    """A well-matched claim with a word the source lacks that looks like an edit (a swapped name or term)."""
    return bool(assessment.alignment.features[_ALIGNED_RISK] >= params().edit_threshold)


def _contradicting(assessment: _Assessment) -> bool:
    """A passage that matches the claim closely but differs in a number, name, place or polarity."""
    return bool(contradiction_rule(assessment.alignment.features[None, :])[0])


def judge_claims(claims: Sequence[Sentence], sources: Sequence[Source]) -> list[Ruling]:
    """One vote per claim with `is_claim=True`, in order."""
    checkable = [c for c in claims if c.is_claim]
    if not checkable:
        return []
    prepared = prepare_sources([s.text for s in sources])
    contexts = [context_stems(s.context) for s in sources]
    analysed = encode([strip_citations(c.text) for c in checkable])
    return [_vote(c, a, sources, prepared, contexts) for c, a in zip(checkable, analysed, strict=True)]


def judge_text(text: str, sources: Sequence[str]) -> JudgedText:
    """Split `text` and judge it against plain sources numbered [1], [2], ... (benchmarks and `check_text`)."""
    claims = tuple(split_claims(text))
    numbered = [Source(index=i + 1, text=s) for i, s in enumerate(sources)]
    votes = tuple(judge_claims(claims, numbered))
    probabilities = [v.confidence if v.status not in NOT_SUPPORTED else 1.0 - v.confidence for v in votes]
    probability = min(probabilities) if probabilities else 0.0
    supported = bool(votes) and all(v.status not in NOT_SUPPORTED for v in votes)
    return JudgedText(claims, votes, probability, supported)
