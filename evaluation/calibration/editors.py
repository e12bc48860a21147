"""Retraining the local judge with its editors' decisions, and the two checks that decide whether to keep it.

Each decided review is one training item: the claim against the passage it cites, labelled supported when the
editor's correct status is verified or inferred. The reviews are split in two halves by a hash of the claim's text
(the same claim always falls on the same side, whatever its id or the order it was reviewed in): the judge is refitted on the benchmarks of `shared/eval` plus
the training half, and the new parameters are kept only if
(a) leave-one-domain-out on SummEdits (fit on two domains and BEGIN, plus the garden half; score the third)
    does not fall below the same figure without the garden by more than the bootstrap spread `make eval`
    prints (its median minus its lower quartile), and
(b) agreement with editors on the held-out half (the share of its reviews whose supported / not-supported call
    matches the editor's) rises above that of the parameters in force.
Plain Python and numpy: no Django (`evaluation.retraining` gathers the reviews and stores the outcome).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from evaluation.calibration.evaluate import (
    SUMMEDITS_DOMAINS,
    leave_one_domain_out,
    leave_one_domain_out_spread,
)
from evaluation.calibration.features import (
    Item,
    ItemFeatures,
    claim_evidence,
    computed_once,
    item_features,
    items_key,
    load_items,
)
from evaluation.calibration.train import balanced_accuracy, fit, item_scores

GARDEN = "garden"
# In the logistic fits the garden's training half carries this share of the total weight (each review is
# repeated): twenty reviews among ~2,900 benchmark items would otherwise not move the weights at all, while a
# larger share (0.2 was tried) pulls the claim threshold down for every text. Check (a) measures the cost.
GARDEN_SHARE: Final = 0.1
# Fewer decided reviews than this say too little about the garden to retrain on (half of them are held out).
MIN_REVIEWS: Final = 20
TOO_FEW_REVIEWS = (
    "Too few editors' decisions to retrain the judge: {count} reviewed claims with 'judge right' or "
    "'judge wrong', at least {minimum} are needed (half of them train, half check)."
)
NO_BENCHMARKS = "No benchmark data in {path}: set JUDGE_EVAL_DIR to the folder of summedits_dev.jsonl."
EVAL_FELL = (
    "Refused: leave-one-domain-out balanced accuracy on SummEdits fell to {new} with the editors' reviews, "
    "below the floor of {floor} (the {baseline} without them minus the bootstrap spread {spread})."
)
AGREEMENT_DID_NOT_RISE = (
    "Refused: agreement with editors on the held-out half did not rise ({before:.0%} with the parameters in "
    "force, {after:.0%} retrained, over {count} reviews)."
)
KEPT = (
    "Kept: agreement with editors on the held-out half rose from {before:.0%} to {after:.0%} ({count} "
    "reviews), and leave-one-domain-out on SummEdits stayed at {new} (floor {floor})."
)


@dataclass(frozen=True)
class EditorReview:
    """One editor's decision on a claim: the claim, the passage it cites, and whether it is supported there."""

    claim_id: int
    claim: str
    passage: str
    supported: bool


@dataclass(frozen=True)
class Retrained:
    """The outcome of a retraining: the new parameters, whether they are kept, and the report saying why."""

    params: dict[str, Any]
    kept: bool
    report: dict[str, Any]


def held_out(claim: str) -> bool:
    """Whether a claim's review falls in the held-out half: a stable hash of its text, so neither its id (which
    depends on how many claims the database held before) nor the order of the reviews moves it, and two claims
    of the same words never fall on both sides."""
    return hashlib.sha256(f"claim-{claim}".encode()).digest()[0] % 2 == 1


def review_features(reviews: Sequence[EditorReview]) -> list[ItemFeatures]:
    """Each review as a one-claim item: the claim's features against its cited passage."""
    out = []
    for review in reviews:
        [(rows, words)] = claim_evidence([review.claim], review.passage)
        out.append(ItemFeatures(rows[None, :], (words,)))
    return out


def _repeats(benchmark_items: int, garden_items: int) -> int:
    """How many times each garden item is repeated so the garden carries GARDEN_SHARE of the weight."""
    if not garden_items:
        return 0
    return max(1, round(GARDEN_SHARE / (1 - GARDEN_SHARE) * benchmark_items / garden_items))


def _with_garden(
    items: Sequence[Item],
    features: Sequence[ItemFeatures],
    garden: Sequence[ItemFeatures],
    labels: Sequence[bool],
) -> tuple[list[Item], list[ItemFeatures]]:
    """The benchmark items followed by the garden items, each repeated (see GARDEN_SHARE)."""
    repeats = _repeats(len(items), len(garden))
    extra = [
        Item(id=f"garden-{n}", dataset=GARDEN, domain=GARDEN, source="", text="", supported=label)
        for n, label in enumerate(labels)
    ]
    return [*items, *extra * repeats], [*features, *list(garden) * repeats]


def spread_baseline(
    items: Sequence[Item], features: Sequence[ItemFeatures], cache_dir: Path | None
) -> dict[str, Any]:
    """Leave-one-domain-out (with BEGIN) without the garden, and its bootstrap spread, as `make eval` prints
    them. They depend on the benchmarks only, so with `cache_dir` they are computed once (about a minute)."""
    cache_file = cache_dir / f"baseline-{items_key(items)}.json" if cache_dir else None
    with computed_once(cache_file):
        if cache_file and cache_file.exists():
            stored: dict[str, Any] = json.loads(cache_file.read_text())
            return stored
        baseline = {
            "leave_one_domain_out_plus_begin": leave_one_domain_out(items, features, with_begin=True),
            "spread": leave_one_domain_out_spread(items, features)["mean_balanced_accuracy"],
        }
        if cache_file:
            cache_file.write_text(json.dumps(baseline))
        return baseline


def _garden_leave_one_domain_out(
    items: Sequence[Item],
    features: Sequence[ItemFeatures],
    garden: Sequence[ItemFeatures],
    labels: Sequence[bool],
) -> dict[str, float]:
    """Leave-one-domain-out as `evaluate.leave_one_domain_out(with_begin=True)`, the garden half added to
    every training fold."""
    scores: dict[str, float] = {}
    for domain in SUMMEDITS_DOMAINS:
        train = [i for i, item in enumerate(items) if item.dataset != "summedits" or item.domain != domain]
        test = [i for i, item in enumerate(items) if item.dataset == "summedits" and item.domain == domain]
        train_items, train_features = _with_garden(
            [items[i] for i in train], [features[i] for i in train], garden, labels
        )
        params = fit(train_features, [item.supported for item in train_items])
        _, predicted = item_scores([features[i] for i in test], params)
        scores[domain] = round(100 * balanced_accuracy([items[i].supported for i in test], predicted), 1)
    scores["mean_balanced_accuracy"] = round(statistics.mean(scores[d] for d in SUMMEDITS_DOMAINS), 1)
    return scores


def agreement(features: Sequence[ItemFeatures], labels: Sequence[bool], params: dict[str, Any]) -> float:
    """Share of reviews whose supported / not-supported call under `params` matches the editor's."""
    if not labels:
        return 0.0
    _, predicted = item_scores(features, params)
    return float(np.mean(np.asarray(predicted, dtype=bool) == np.asarray(labels, dtype=bool)))


def retrain(
    reviews: Sequence[EditorReview],
    current: dict[str, Any],
    eval_dir: Path,
    cache_dir: Path | None = None,
) -> Retrained:
    """Refit on the benchmarks plus the training half of `reviews`; keep it only if both checks pass.

    `current` is the params document in force, whose agreement with editors the new one must beat.
    """
    if len(reviews) < MIN_REVIEWS:
        raise ValueError(TOO_FEW_REVIEWS.format(count=len(reviews), minimum=MIN_REVIEWS))
    items = load_items(eval_dir.resolve())
    if not items:
        raise ValueError(NO_BENCHMARKS.format(path=eval_dir.resolve()))
    features = item_features(items, cache_dir)
    garden = review_features(reviews)
    train = [i for i, review in enumerate(reviews) if not held_out(review.claim)]
    test = [i for i, review in enumerate(reviews) if held_out(review.claim)]
    train_features, train_labels = [garden[i] for i in train], [reviews[i].supported for i in train]
    test_features, test_labels = [garden[i] for i in test], [reviews[i].supported for i in test]

    all_items, all_features = _with_garden(items, features, train_features, train_labels)
    # Each benchmark and the garden count equally when the thresholds are chosen (as `train.main` does).
    params = fit(all_features, [i.supported for i in all_items], [i.dataset for i in all_items])
    params["trained_on"] = [*sorted({f"{i.dataset}/{i.domain}" for i in items}), GARDEN]
    params["items"] = len(items) + len(train)

    baseline = spread_baseline(items, features, cache_dir)
    before_lodo = baseline["leave_one_domain_out_plus_begin"]["mean_balanced_accuracy"]
    spread = round(baseline["spread"]["median"] - baseline["spread"]["q1"], 1)
    floor = round(before_lodo - spread, 1)
    after_lodo = _garden_leave_one_domain_out(items, features, train_features, train_labels)
    before = agreement(test_features, test_labels, current)
    after = agreement(test_features, test_labels, params)

    eval_ok = after_lodo["mean_balanced_accuracy"] >= floor
    agreement_ok = after > before
    figures = {"new": after_lodo["mean_balanced_accuracy"], "floor": floor, "baseline": before_lodo}
    if not eval_ok:
        reason = EVAL_FELL.format(spread=spread, **figures)
    elif not agreement_ok:
        reason = AGREEMENT_DID_NOT_RISE.format(before=before, after=after, count=len(test))
    else:
        reason = KEPT.format(before=before, after=after, count=len(test), **figures)
    report = {
        "reason": reason,
        "reviews": len(reviews),
        "training_reviews": len(train),
        "held_out_reviews": len(test),
        "garden_repeats": _repeats(len(items), len(train)),
        "agreement_before": round(before, 3),
        "agreement_after": round(after, 3),
        "agreement_rose": agreement_ok,
        "lodo_baseline": before_lodo,
        "lodo_spread": spread,
        "lodo_floor": floor,
        "lodo_with_reviews": after_lodo,
        "lodo_held": eval_ok,
        "bootstrap": baseline["spread"],
    }
    return Retrained(params, eval_ok and agreement_ok, report)
