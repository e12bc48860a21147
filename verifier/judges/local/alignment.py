"""Aligning a claim to a prepared source: rank the source's pieces, measure how much of the claim they
cover, check its figures, names and polarity against them, match its words in context, and return the
features the models read with the flags the mismatches raise."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from verifier.judges.local.encoding import Text
from verifier.judges.local.figures import is_year, number_value, range_end_year, slash_date, written_otherwise
from verifier.judges.local.lexicon import (
    MONTHS,
    PLACE_PREPOSITIONS,
    STOPWORDS,
    VAGUE_NUMBER_WORDS,
    antonym_pairs,
    negated,
    ruled_out,
)
from verifier.judges.local.model import FEATURE_NAMES, WORD_REPRESENTATION_SIZE, novel_word_risk
from verifier.judges.local.sources import Prepared
from verifier.terms import Flag

_TOP_SENTENCES = 3
_TOKEN_SENTENCES = 5


@dataclass(frozen=True)
class Alignment:
    """A claim against one source: the features, the best piece and the mismatches found."""

    features: npt.NDArray[np.float64]
    best_piece: int
    flags: tuple[str, ...]
    cos_best: float
    coverage_top: float
    novel_words: npt.NDArray[np.float32]  # (k, WORD_REPRESENTATION_SIZE): the claim words not in the source


def align(claim: Text, source: Prepared) -> Alignment:
    """Features of one claim against one source, and the flags its aligned passage raises."""
    n_features = len(FEATURE_NAMES)
    content_stems = [claim.stems[i] for i in claim.content]
    if not source.pieces:
        features = np.zeros(n_features)
        features[FEATURE_NAMES.index("novel_content")] = len(content_stems)
        features[FEATURE_NAMES.index("log_length")] = np.log1p(len(content_stems))
        return Alignment(
            features,
            -1,
            (Flag.NOT_IN_SOURCES,),
            0.0,
            0.0,
            np.zeros((0, WORD_REPRESENTATION_SIZE), np.float32),
        )

    sims = source.vectors @ claim.vector
    window_sims = source.window_vectors @ claim.vector
    unique_stems = set(content_stems)
    if unique_stems:
        overlap = np.array(
            [len(unique_stems.intersection(p.stems)) / len(unique_stems) for p in source.pieces]
        )
    else:
        overlap = np.zeros(len(source.pieces))
    ranking = np.argsort(-(sims + 0.5 * overlap))
    top = ranking[:_TOP_SENTENCES]
    best = int(top[0])
    top_stems = set().union(*(source.pieces[i].stems for i in top))
    # A claim without a single content word ("He did.") has nothing a source could cover.
    coverage_top = len(unique_stems & top_stems) / len(unique_stems) if unique_stems else 0.0
    coverage_source = len(unique_stems & source.stems) / len(unique_stems) if unique_stems else 0.0
    novel = [s for s in unique_stems if s not in source.stems]

    # Numbers and names are checked against the whole source, negation against the best passage.
    best_piece = source.pieces[best]
    flags: list[str] = []
    novel_numbers = 0
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
        novel_numbers += 1
        previous = claim.words[i - 1].lower() if i else ""
        following = claim.words[i + 1].lower() if i + 1 < len(claim.words) else ""
        if dates or previous in MONTHS or following in MONTHS:
            flags.append(Flag.WRONG_DATE)
        elif is_year(value):
            flags.append(Flag.WRONG_YEAR)
        else:
            flags.append(Flag.WRONG_NUMBER)
    novel_names = 0
    for i, word in enumerate(claim.words):
        if i == 0 or not word[0].isupper() or word.lower() in STOPWORDS or word.lower() in MONTHS:
            continue
        if word.lower() in source.lower_words or claim.stems[i] in source.stems:
            continue
        if ruled_out(claim.words, i):
            continue  # "in Millbridge, not Ashcombe" names a place only to say it is not the one
        novel_names += 1
        previous = claim.words[i - 1].lower()
        flags.append(Flag.WRONG_PLACE if previous in PLACE_PREPOSITIONS else Flag.WRONG_NAME)
    negation_mismatch = float(negated(claim.words) != negated(best_piece.words))
    if negation_mismatch:
        flags.append(Flag.NEGATION)
    antonyms = antonym_pairs(novel, source.stems)
    if antonyms:
        flags.append(Flag.ANTONYM)

    # Token alignment: each content word's best contextual match among the top passages' words.
    token_pieces = ranking[:_TOKEN_SENTENCES]
    target_vectors = np.concatenate([source.pieces[i].word_vectors for i in token_pieces])
    target_stems = [s for i in token_pieces for s in source.pieces[i].stems]
    if claim.content and len(target_vectors):
        claim_vectors = claim.word_vectors[list(claim.content)]
        similarity = claim_vectors @ target_vectors.T
        best_match = similarity.max(1)
        token_min = float(best_match.min())
        token_mean = float(best_match.mean())
        token_low = float((best_match < 0.55).mean())
        # A word present in the passage but used in another context (swapped roles) shows as a weak
        # contextual match even among its exact occurrences.
        stem_array = np.array(target_stems)
        context_scores = []
        soft_novel = 0
        novel_rows = []
        for row, index in enumerate(claim.content):
            same = stem_array == claim.stems[index]
            if same.any():
                context_scores.append(float(similarity[row, same].max()))
            elif claim.stems[index] not in source.stems:
                soft_novel += int(best_match[row] < 0.7)
                word = claim.words[index]
                capitalised = float(index > 0 and word[0].isupper())
                novel_rows.append(np.concatenate([claim_vectors[row], [best_match[row], capitalised]]))
        context_min = min(context_scores) if context_scores else 0.5
        novel_words = np.array(novel_rows, dtype=np.float32).reshape(-1, WORD_REPRESENTATION_SIZE)
    else:
        token_min = token_mean = 1.0
        token_low = 0.0
        context_min = 1.0
        soft_novel = 0
        novel_words = np.zeros((0, WORD_REPRESENTATION_SIZE), dtype=np.float32)

    features = np.array(
        [
            float(sims[best]) if len(sims) else 0.0,
            float(window_sims.max()),
            coverage_top,
            coverage_source,
            float(len(novel)),
            float(novel_numbers),
            float(novel_names),
            negation_mismatch,
            float(antonyms),
            token_min,
            token_mean,
            token_low,
            context_min,
            float(soft_novel),
            float(np.log1p(len(content_stems))),
            risk := novel_word_risk(novel_words),
            # An edit hides in a claim that otherwise matches its passage well (swapped name, number, word).
            risk * coverage_top,
        ]
    )
    if novel and coverage_source < 0.75:
        flags.append(Flag.NOVEL_CONTENT)
    return Alignment(
        features, best, tuple(dict.fromkeys(flags)), float(sims.max()), coverage_top, novel_words
    )
