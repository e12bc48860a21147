"""The models behind the local judge and their calibrated parameters: the claim model (alignment features to
the probability that a claim is supported), the novel-word model (is a word the source lacks an edit?) and
the contradiction rule, all read from `params.json`, which `python -m evaluation.calibration.train` writes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from claimcheck.judges.local.encoding import EMBEDDING_SIZE

PARAMS_PATH: Final = Path(__file__).with_name("params.json")

FEATURE_NAMES: Final = (
    "cos_best",
    "cos_window",
    "coverage_top",
    "coverage_source",
    "novel_content",
    "novel_numbers",
    "novel_names",
    "negation_mismatch",
    "antonym",
    "token_min",
    "token_mean",
    "token_low_share",
    "context_min",
    "novel_soft",
    "log_length",
    "novel_word_risk",
    "aligned_word_risk",
)
# Size of one novel-word representation: its contextual embedding, best-match similarity, capitalisation.
WORD_REPRESENTATION_SIZE: Final = EMBEDDING_SIZE + 2

# A passage this close in meaning (sentence cosine), or holding this share of the claim's content words, is about
# the same fact, so a mismatch on it means the source says otherwise (hand-set; calibration does not fit them).
ALIGNED_COSINE: Final = 0.6
ALIGNED_COVERAGE: Final = 0.6
# Features that, on a well-aligned passage, can mean the source says otherwise.
MISMATCH_FEATURES: Final = ("novel_numbers", "novel_names", "negation_mismatch", "antonym")
# A number, year or date the aligned source does not have always blocks support: readers act on figures.
ALWAYS_CONTRADICTING: Final = ("novel_numbers",)
# An edit threshold above any probability: the edit rule never fires (calibration may choose it too).
EDIT_RULE_OFF: Final = 1.01


@dataclass(frozen=True)
class Params:
    """The calibrated parameters, read from the keys of `params.json` of the same names (all fitted by
    `evaluation.calibration.train`)."""

    mean: npt.NDArray[np.float64]  # claim model: features are standardised by mean and scale,
    scale: npt.NDArray[np.float64]
    weights: npt.NDArray[np.float64]  # then weighed: the log-odds that the claim is supported
    bias: float
    threshold: float  # probability at or above which a claim counts as supported
    verified_threshold: float  # and at or above which a directly quoted claim counts as verified
    contradiction_features: tuple[str, ...]  # mismatch features that make an aligned claim contradicted
    word_weights: npt.NDArray[np.float64]  # logistic model: is a novel word an unsupported edit?
    word_bias: float
    edit_threshold: float  # aligned novel-word risk at or above which a claim is not supported


# Hand-set fallback so the judge still works before calibration has been run (cosine and coverage dominate).
_FALLBACK_WEIGHTS: Final = {"cos_best": 2.0, "coverage_top": 2.0, "novel_numbers": -1.5, "novel_names": -1.0,
                    "negation_mismatch": -1.5, "token_min": 1.0, "antonym": -1.0}  # fmt: skip
# A fair match: cosine, coverage and word match at this level count as neither for nor against support.
_FALLBACK_CENTRE: Final = 0.6
# Features are divided by it and the weights multiplied by it, so the weights above apply as written.
_FALLBACK_SCALE: Final = 0.25
# Calibration sets `threshold` in params.json; before it has run, a claim needs even odds to count as supported.
_FALLBACK_THRESHOLD: Final = 0.5
# Calibration sets `verified_threshold`; before it has run, a direct quote needs clearly better than even odds.
_FALLBACK_VERIFIED_THRESHOLD: Final = 0.7


def params_from_dict(data: dict[str, Any]) -> Params | None:
    """Parameters from the keys of a `params.json` document; None when it was fitted on other features."""
    if tuple(data.get("feature_names", ())) != FEATURE_NAMES:
        return None
    return Params(
        np.array(data["mean"], dtype=np.float64),
        np.array(data["scale"], dtype=np.float64),
        np.array(data["weights"], dtype=np.float64),
        float(data["bias"]),
        float(data["threshold"]),
        float(data["verified_threshold"]),
        tuple(data["contradiction_features"]),
        np.array(data["word_weights"], dtype=np.float64),
        float(data["word_bias"]),
        float(data["edit_threshold"]),
    )


@lru_cache(maxsize=1)
def shipped_params() -> Params:
    """The committed calibration (or the hand-set fallback when the file is missing)."""
    n = len(FEATURE_NAMES)
    if PARAMS_PATH.exists():
        committed = params_from_dict(json.loads(PARAMS_PATH.read_text()))
        if committed is not None:
            return committed
    weights = np.array([_FALLBACK_WEIGHTS.get(name, 0.0) for name in FEATURE_NAMES])
    mean = np.zeros(n)
    mean[FEATURE_NAMES.index("cos_best")] = _FALLBACK_CENTRE
    mean[FEATURE_NAMES.index("coverage_top")] = _FALLBACK_CENTRE
    mean[FEATURE_NAMES.index("token_min")] = _FALLBACK_CENTRE
    word_weights = np.zeros(WORD_REPRESENTATION_SIZE)  # no novel-word model: every word is risk 0.5
    return Params(
        mean,
        np.full(n, _FALLBACK_SCALE),
        weights * _FALLBACK_SCALE,
        0.0,
        _FALLBACK_THRESHOLD,
        _FALLBACK_VERIFIED_THRESHOLD,
        MISMATCH_FEATURES,
        word_weights,
        0.0,
        EDIT_RULE_OFF,
    )


# Parameters installed in place of the committed ones (the verifier installs the active version of its
# database); None: the committed `params.json`.
_installed: Params | None = None


def params() -> Params:
    """The parameters the judge decides with: the installed ones, else the committed calibration."""
    return _installed if _installed is not None else shipped_params()


def params_install(calibrated: Params | None) -> None:
    """Judge with `calibrated` from now on in this process (None: back to the committed `params.json`)."""
    global _installed
    _installed = calibrated


def novel_word_risk(
    novel_words: npt.NDArray[np.floating[Any]],
    weights: npt.NDArray[np.float64] | None = None,
    bias: float = 0.0,
) -> float:
    """The highest probability, among a claim's words absent from the source, that the word is an edit.

    Entities, numbers and polarity words are much riskier than a rephrased verb; 0 when every word is there.
    """
    if not len(novel_words):
        return 0.0
    if weights is None:
        calibrated = params()
        weights, bias = calibrated.word_weights, calibrated.word_bias
    z = novel_words.astype(np.float64) @ weights + bias
    return float(1.0 / (1.0 + np.exp(-np.clip(z.max(), -30, 30))))


def supported_probability(features: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Calibrated probability that a claim is supported, for feature rows `(..., n_features)`."""
    calibrated = params()
    z = ((features - calibrated.mean) / calibrated.scale) @ calibrated.weights + calibrated.bias
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def contradiction_rule(
    features: npt.NDArray[np.float64], names: Sequence[str] | None = None
) -> npt.NDArray[np.bool_]:
    """Rows `(n, n_features)` whose claim is well aligned yet carries a mismatch that counts as disagreement.

    `names` are the optional mismatch features in force (the calibrated ones by default); numbers always count.
    """
    if names is None:
        names = params().contradiction_features
    cos = features[:, FEATURE_NAMES.index("cos_best")]
    coverage = features[:, FEATURE_NAMES.index("coverage_top")]
    aligned = (cos >= ALIGNED_COSINE) | (coverage >= ALIGNED_COVERAGE)
    mismatch = np.zeros(len(features), dtype=bool)
    for name in {*ALWAYS_CONTRADICTING, *names}:
        mismatch |= features[:, FEATURE_NAMES.index(name)] > 0
    return aligned & mismatch
