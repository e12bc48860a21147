"""The local judge: offline claim verification against numbered sources.

Each claim is aligned to the source sentences (MiniLM sentence and token embeddings plus word overlap), then the
aligned passage is checked for numbers, years, dates, names, places, negation (clause by clause), the subject
the passage says it of, and novel content. A small novel-word model scores the claim words the source lacks (a
swapped name, term or polarity word is riskier than a rephrased verb). A logistic model turns all features into
the probability that the claim is supported; both models, their thresholds and the contradiction rules are
fitted by `python -m evaluation.calibration.train` and committed in `params.json`. Rules on top pick the status,
the verbatim quote and the flags; their thresholds are hand-set, each named with its reason where it is used.
Pure Python, numpy and the shared MiniLM: no Django.

What lives where, in the order the modules build on one another:
- `lexicon`: the word lists (stopwords, negations, months, number words, places), stemming, negation checks;
- `figures`: the value of a number, year or date, and the other ways a source may write the same figure;
- `encoding`: MiniLM sentence and per-word embeddings of a text (`Text`);
- `subjects`: a clause's subject noun phrase, read with word lists (no parser);
- `clauses`: sentences cut into clauses with their polarity, figures, subject and topic; a negation read in
  its clause;
- `sources`: sources cut into encoded sentence pieces and clauses (`Prepared`), recent ones kept;
- `model`: the feature names, the calibrated parameters (`params.json`, or a version the verifier installs),
  the claim and novel-word models and the contradiction rule;
- `alignment`: one claim against one source: the features and the flags its mismatches raise;
- `binding`: whether a passage says the claim of the claim's own subject (else `wrong-subject`);
- `judge`: one ruling per claim across all sources, and a whole text's outcome.
Code that only calibration runs (features of the benchmark items) lives in `evaluation.calibration`.
"""

from claimcheck.judges.local.encoding import Encoder, encoder_install
from claimcheck.judges.local.judge import JudgedText, judge_claims, judge_text
from claimcheck.judges.local.model import (
    ALWAYS_CONTRADICTING,
    EDIT_RULE_OFF,
    FEATURE_NAMES,
    MISMATCH_FEATURES,
    PARAMS_PATH,
    WORD_REPRESENTATION_SIZE,
    Params,
    contradiction_rule,
    novel_word_risk,
    params_from_dict,
    params_install,
    supported_probability,
)
from claimcheck.judges.local.sources import forget_prepared_sources

__all__ = [
    "ALWAYS_CONTRADICTING",
    "EDIT_RULE_OFF",
    "FEATURE_NAMES",
    "MISMATCH_FEATURES",
    "PARAMS_PATH",
    "WORD_REPRESENTATION_SIZE",
    "Encoder",
    "JudgedText",
    "Params",
    "contradiction_rule",
    "encoder_install",
    "forget_prepared_sources",
    "judge_claims",
    "judge_text",
    "novel_word_risk",
    "params_from_dict",
    "params_install",
    "supported_probability",
]
