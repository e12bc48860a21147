"""Aligning a claim to a prepared source: rank the source's pieces, measure how much of the claim they
cover, check its figures, names and polarity against them, match its words in context, and return the
features the models read with the flags the mismatches raise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from claimcheck.judges.local.clauses import claim_clauses, read_negation
from claimcheck.judges.local.encoding import Text
from claimcheck.judges.local.figures import (
    is_written_year,
    number_value,
    range_end_year,
    slash_date,
    written_otherwise,
)
from claimcheck.judges.local.lexicon import (
    MONTHS,
    PLACE_PREPOSITIONS,
    STOPWORDS,
    VAGUE_NUMBER_WORDS,
    antonym_pairs,
    ruled_out,
)
from claimcheck.judges.local.model import FEATURE_NAMES, WORD_REPRESENTATION_SIZE, novel_word_risk
from claimcheck.judges.local.sources import Prepared
from claimcheck.terms import Flag

# The numbers below are hand-set, not fitted by calibration (which weighs the features they produce).
# Coverage counts the words of the three closest pieces: a claim may join facts from neighbouring sentences.
_TOP_SENTENCES: Final = 3
# Words are matched in context among the five closest pieces, two more than coverage reads: a shared word may
# sit a little further away.
_TOKEN_SENTENCES: Final = 5
# Ranking pieces, the share of the claim's words a piece holds counts half its cosine: meaning leads, words settle.
OVERLAP_WEIGHT: Final = 0.5
# A content word whose best contextual match is below this has no counterpart in the passages (token_low_share).
WEAK_WORD_MATCH: Final = 0.55
# A word the source lacks is softly novel (novel_soft) unless a passage word matches it this well, as a synonym does.
SYNONYM_MATCH: Final = 0.7
# context_min when no content word recurs in the passages: no context to compare, so neither good nor bad.
UNMATCHED_CONTEXT: Final = 0.5
# Novel content is flagged when over a quarter of the claim's content words are nowhere in the source; one or two
# new words in a longer claim are usually rephrasing.
NOVEL_CONTENT_COVERAGE: Final = 0.75


@dataclass(frozen=True)
class Alignment:
    """A claim against one source: the features, the best piece and the mismatches found."""

    features: npt.NDArray[np.float64]
    best_piece: int
    flags: tuple[str, ...]
    cos_best: float
    coverage_top: float
    novel_words: npt.NDArray[np.float32]  # (k, WORD_REPRESENTATION_SIZE): the claim words not in the source
    reversed: bool = False  # a clause of the claim restates one of the passage's with its polarity reversed


def align(claim: Text, source: Prepared, known: frozenset[str] = frozenset()) -> Alignment:
    """Features of one claim against one source, and the flags its aligned passage raises.

    `known` are claim stems to count as present though the text lacks them: the words of the claim's subject
    that the source's heading or article title holds ("Fellside station" above "The station has one platform").
    """
    content_stems = [claim.stems[i] for i in claim.content]
    if not source.pieces:
        return _without_passages(len(content_stems))
    unique_stems = set(content_stems)
    sims = source.vectors @ claim.vector
    ranking = _rank_pieces(sims, unique_stems, source)
    best = int(ranking[0])
    reading = read_negation(
        claim_clauses(claim, source.lowercase),
        [c for c in source.clauses if c.piece == best],
        claim.words,
        source.pieces[best].words,
    )
    # "not cut in spring" restates "never cut in spring": a negation that agrees is no new word.
    known = known | reading.agreeing
    top_stems = set().union(known, *(source.pieces[i].stems for i in ranking[:_TOP_SENTENCES]))
    coverage_top = _coverage(unique_stems, top_stems)
    coverage_source = _coverage(unique_stems, source.stems | known)
    novel = [s for s in unique_stems if s not in source.stems and s not in known]
    # Numbers and names are checked against the whole source, negation clause by clause in the best passage.
    novel_numbers, number_flags = _figure_mismatches(claim, source)
    novel_names, name_flags = _name_mismatches(claim, source, known)
    negation_mismatch = float(reading.mismatch)
    antonyms = antonym_pairs(novel, source.stems)
    words = _match_words(claim, source, ranking[:_TOKEN_SENTENCES], known)
    risk = novel_word_risk(words.novel_words)
    values = {
        "cos_best": float(sims[best]),
        "cos_window": float((source.window_vectors @ claim.vector).max()),
        "coverage_top": coverage_top,
        "coverage_source": coverage_source,
        "novel_content": float(len(novel)),
        "novel_numbers": float(novel_numbers),
        "novel_names": float(novel_names),
        "negation_mismatch": negation_mismatch,
        "antonym": float(antonyms),
        "token_min": words.token_min,
        "token_mean": words.token_mean,
        "token_low_share": words.token_low_share,
        "context_min": words.context_min,
        "novel_soft": float(words.novel_soft),
        "log_length": float(np.log1p(len(content_stems))),
        "novel_word_risk": risk,
        # An edit hides in a claim that otherwise matches its passage well (swapped name, number, word).
        "aligned_word_risk": risk * coverage_top,
    }
    features = np.array([values[name] for name in FEATURE_NAMES])
    flags = [*number_flags, *name_flags]
    if negation_mismatch:
        flags.append(Flag.NEGATION)
    if antonyms:
        flags.append(Flag.ANTONYM)
    if novel and coverage_source < NOVEL_CONTENT_COVERAGE:
        flags.append(Flag.NOVEL_CONTENT)
    return Alignment(
        features,
        best,
        tuple(dict.fromkeys(flags)),
        float(sims.max()),
        coverage_top,
        words.novel_words,
        reading.reversed,
    )


def _without_passages(n_content_words: int) -> Alignment:
    """A claim against an empty source: every content word is novel, and nothing is in the sources."""
    features = np.zeros(len(FEATURE_NAMES))
    features[FEATURE_NAMES.index("novel_content")] = n_content_words
    features[FEATURE_NAMES.index("log_length")] = np.log1p(n_content_words)
    return Alignment(
        features, -1, (Flag.NOT_IN_SOURCES,), 0.0, 0.0, np.zeros((0, WORD_REPRESENTATION_SIZE), np.float32)
    )


def _rank_pieces(
    sims: npt.NDArray[np.float32], unique_stems: set[str], source: Prepared
) -> npt.NDArray[np.intp]:
    """The source's pieces, closest to the claim first: sentence cosine plus a share of the words in common."""
    if unique_stems:
        overlap = np.array(
            [len(unique_stems.intersection(p.stems)) / len(unique_stems) for p in source.pieces]
        )
    else:
        overlap = np.zeros(len(source.pieces))
    return np.argsort(-(sims + OVERLAP_WEIGHT * overlap))


def _coverage(unique_stems: set[str], stems: set[str] | frozenset[str]) -> float:
    """The share of the claim's content stems among `stems`."""
    # A claim without a single content word ("He did.") has nothing a source could cover.
    return len(unique_stems & stems) / len(unique_stems) if unique_stems else 0.0


def _figure_mismatches(claim: Text, source: Prepared) -> tuple[int, list[str]]:
    """The claim's numbers, years and dates that the source has in no writing, and a flag for each."""
    flags: list[str] = []
    for i, word in enumerate(claim.words):
        value = number_value(word)
        if value is None or value in source.numbers:
            continue
        if not word[0].isdigit() and (value in {"1", "2"} or word.lower() in VAGUE_NUMBER_WORDS):
            continue  # "one", "second", "half", "a million" are too often not figures at all
        if written_otherwise(claim, i, value, source):
            continue
        dates = slash_date(value)
        value = range_end_year(claim, i, value) or value
        previous = claim.words[i - 1].lower() if i else ""
        following = claim.words[i + 1].lower() if i + 1 < len(claim.words) else ""
        if dates or previous in MONTHS or following in MONTHS:
            flags.append(Flag.WRONG_DATE)
        elif is_written_year(value):
            flags.append(Flag.WRONG_YEAR)
        else:
            flags.append(Flag.WRONG_NUMBER)
    return len(flags), flags


def _name_mismatches(claim: Text, source: Prepared, known: frozenset[str]) -> tuple[int, list[str]]:
    """The claim's capitalised words (past its first) that the source lacks, and a name or place flag for each."""
    flags: list[str] = []
    for i, word in enumerate(claim.words):
        if i == 0 or not word[0].isupper() or word.lower() in STOPWORDS or word.lower() in MONTHS:
            continue
        if word.lower() in source.lower_words or claim.stems[i] in source.stems or claim.stems[i] in known:
            continue
        if ruled_out(claim.words, i):
            continue  # "in Millbridge, not Ashcombe" names a place only to say it is not the one
        previous = claim.words[i - 1].lower()
        flags.append(Flag.WRONG_PLACE if previous in PLACE_PREPOSITIONS else Flag.WRONG_NAME)
    return len(flags), flags


@dataclass(frozen=True)
class _WordMatch:
    """How the claim's content words match the words of its closest passages, in context."""

    token_min: float
    token_mean: float
    token_low_share: float
    context_min: float
    novel_soft: int
    novel_words: npt.NDArray[np.float32]


# A claim without content words, or passages without words: nothing to match, and nothing against it.
_NOTHING_TO_MATCH = _WordMatch(
    1.0, 1.0, 0.0, 1.0, 0, np.zeros((0, WORD_REPRESENTATION_SIZE), dtype=np.float32)
)


def _match_words(
    claim: Text, source: Prepared, pieces: npt.NDArray[np.intp], known: frozenset[str]
) -> _WordMatch:
    """Each content word's best contextual match among the words of `pieces`."""
    target_vectors = np.concatenate([source.pieces[i].word_vectors for i in pieces])
    if not claim.content or not len(target_vectors):
        return _NOTHING_TO_MATCH
    claim_vectors = claim.word_vectors[list(claim.content)]
    similarity = claim_vectors @ target_vectors.T
    best_match = similarity.max(1)
    # A word present in the passage but used in another context (swapped roles) shows as a weak
    # contextual match even among its exact occurrences.
    stem_array = np.array([s for i in pieces for s in source.pieces[i].stems])
    context_scores = []
    soft_novel = 0
    novel_rows = []
    for row, index in enumerate(claim.content):
        same = stem_array == claim.stems[index]
        if same.any():
            context_scores.append(float(similarity[row, same].max()))
        elif claim.stems[index] not in source.stems and claim.stems[index] not in known:
            soft_novel += int(best_match[row] < SYNONYM_MATCH)
            word = claim.words[index]
            capitalised = float(index > 0 and word[0].isupper())
            novel_rows.append(np.concatenate([claim_vectors[row], [best_match[row], capitalised]]))
    return _WordMatch(
        token_min=float(best_match.min()),
        token_mean=float(best_match.mean()),
        token_low_share=float((best_match < WEAK_WORD_MATCH).mean()),
        context_min=min(context_scores) if context_scores else UNMATCHED_CONTEXT,
        novel_soft=soft_novel,
        novel_words=np.array(novel_rows, dtype=np.float32).reshape(-1, WORD_REPRESENTATION_SIZE),
    )
