"""Measure the local judge on the benchmarks and print a JSON report.

Usage: `python -m evaluation.calibration.evaluate [--eval-dir DIR] [--cache-dir DIR]`. Reports balanced accuracy
(supported vs not) and the AUC of the risk score per dataset and domain for the committed parameters,
leave-one-domain-out on the three SummEdits domains (fit on two, score the third, no peeking) with its
spread over bootstrap draws of the training documents, 5-fold cross-validation on BEGIN (folds cut by
document: snippets that share text stay on one side), the product path on a sample with what the quote gate does
to its votes, and the judge's speed.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from claimcheck.judges.local import PARAMS_PATH, JudgedText
from claimcheck.judges.types import Source
from claimcheck.quote_gate import gate_vote
from claimcheck.terms import NOT_SUPPORTED
from evaluation.calibration.features import (
    DEFAULT_EVAL_DIR,
    Item,
    ItemFeatures,
    item_features,
    load_items,
    set_single_thread,
)
from evaluation.calibration.train import balanced_accuracy, fit, item_scores
from verifier.encoder import encoder_use

FloatArray = npt.NDArray[np.float64]
SUMMEDITS_DOMAINS = ("podcast", "samsum", "scitldr")


def auc(truth: Sequence[bool], risk: Sequence[float]) -> float:
    """Area under the ROC curve of `risk` for detecting not-supported items (ties count half)."""
    bad = np.array([r for r, t in zip(risk, truth, strict=True) if not t])
    good = np.array([r for r, t in zip(risk, truth, strict=True) if t])
    if not len(bad) or not len(good):
        return float("nan")
    greater = (bad[:, None] > good[None, :]).sum() + 0.5 * (bad[:, None] == good[None, :]).sum()
    return float(greater / (len(bad) * len(good)))


def _score(
    items: Sequence[Item], features: Sequence[ItemFeatures], params: dict[str, Any]
) -> dict[str, float]:
    scores, predicted = item_scores(features, params)
    truth = [item.supported for item in items]
    return {
        "balanced_accuracy": round(100 * balanced_accuracy(truth, predicted), 1),
        "auc": round(auc(truth, list(1.0 - scores)), 3),
        "n": len(items),
    }


def _subset(
    items: Sequence[Item], features: Sequence[ItemFeatures], keep: Any
) -> tuple[list[Item], list[ItemFeatures]]:
    chosen = [i for i, item in enumerate(items) if keep(item)]
    return [items[i] for i in chosen], [features[i] for i in chosen]


def committed_report(
    items: Sequence[Item], features: Sequence[ItemFeatures], params: dict[str, Any]
) -> dict[str, Any]:
    """Scores of the committed parameters (in-sample: they were fitted on these items)."""
    report: dict[str, Any] = {}
    for dataset in sorted({item.dataset for item in items}):
        sub_items, sub_features = _subset(items, features, lambda item, d=dataset: item.dataset == d)
        entry: dict[str, Any] = dict(_score(sub_items, sub_features, params))
        entry["domains"] = {}
        for domain in sorted({item.domain for item in sub_items}):
            dom_items, dom_features = _subset(
                sub_items, sub_features, lambda item, d=domain: item.domain == d
            )
            entry["domains"][domain] = _score(dom_items, dom_features, params)
        report[dataset] = entry
    return report


def leave_one_domain_out(
    items: Sequence[Item], features: Sequence[ItemFeatures], *, with_begin: bool
) -> dict[str, Any]:
    """Fit on two SummEdits domains (and BEGIN if asked), score the third."""
    report: dict[str, Any] = {}
    for held_out in SUMMEDITS_DOMAINS:
        train_items, train_features = _subset(
            items,
            features,
            lambda item, h=held_out: (
                (item.dataset == "summedits" and item.domain != h) or (with_begin and item.dataset == "begin")
            ),
        )
        test_items, test_features = _subset(
            items, features, lambda item, h=held_out: item.dataset == "summedits" and item.domain == h
        )
        params = fit(train_features, [item.supported for item in train_items])
        report[held_out] = _score(test_items, test_features, params)
        report[held_out]["threshold"] = params["threshold"]
        report[held_out]["edit_threshold"] = params["edit_threshold"]
    report["mean_balanced_accuracy"] = round(
        statistics.mean(report[d]["balanced_accuracy"] for d in SUMMEDITS_DOMAINS), 1
    )
    report["mean_auc"] = round(statistics.mean(report[d]["auc"] for d in SUMMEDITS_DOMAINS), 3)
    return report


def leave_one_domain_out_spread(
    items: Sequence[Item], features: Sequence[ItemFeatures], *, resamples: int = 20, seed: int = 0
) -> dict[str, Any]:
    """How much the leave-one-domain-out figures move with the training documents drawn.

    Each resample fits on a bootstrap of the two training domains' documents (drawn with replacement, all of
    a document's summaries together) and scores the held-out domain. With about 40 training documents a
    single fit is noisy: a change whose figures stay inside this spread has not been shown to matter.
    """
    rng = np.random.default_rng(seed)
    summedits = [i for i, item in enumerate(items) if item.dataset == "summedits"]
    by_domain_source: dict[str, dict[str, list[int]]] = {}
    for i in summedits:
        by_domain_source.setdefault(items[i].domain, {}).setdefault(items[i].source, []).append(i)
    folds = {
        held_out: (
            [
                members
                for domain, sources in sorted(by_domain_source.items())
                if domain != held_out
                for _, members in sorted(sources.items())
            ],
            [i for members in by_domain_source[held_out].values() for i in members],
        )
        for held_out in SUMMEDITS_DOMAINS
    }
    scores: dict[str, list[float]] = {domain: [] for domain in SUMMEDITS_DOMAINS}
    means = []
    for _ in range(resamples):
        for held_out, (documents, test) in folds.items():
            drawn = rng.integers(len(documents), size=len(documents))
            train = [i for d in drawn for i in documents[d]]
            params = fit([features[i] for i in train], [items[i].supported for i in train])
            _, predicted = item_scores([features[i] for i in test], params)
            scores[held_out].append(100 * balanced_accuracy([items[i].supported for i in test], predicted))
        means.append(statistics.mean(scores[d][-1] for d in SUMMEDITS_DOMAINS))

    def summary(values: Sequence[float]) -> dict[str, float]:
        low, median, high = np.percentile(values, [25, 50, 75])
        return {"median": round(float(median), 1), "q1": round(float(low), 1), "q3": round(float(high), 1)}

    report: dict[str, Any] = {"resamples": resamples}
    report.update({domain: summary(scores[domain]) for domain in SUMMEDITS_DOMAINS})
    report["mean_balanced_accuracy"] = summary(means)
    return report


# Two knowledge snippets sharing a run of this many words come from one document (a film's page, an article):
# they fall on one side of a fold together.
SHARED_RUN_WORDS = 6


def begin_documents(sources: Sequence[str]) -> list[list[str]]:
    """BEGIN's knowledge snippets grouped by the document they come from, as far as the text shows it: snippets
    joined, directly or through others, by a shared run of `SHARED_RUN_WORDS` words. (The data carries no
    dialogue or document id; a dialogue's turns that share no snippet text cannot be told apart here.)"""
    parent = list(range(len(sources)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[tuple[str, ...], int] = {}
    for i, source in enumerate(sources):
        words = re.findall(r"\w+", source.lower())
        for k in range(len(words) - SHARED_RUN_WORDS + 1):
            other = first_with.setdefault(tuple(words[k : k + SHARED_RUN_WORDS]), i)
            parent[root(i)] = root(other)
    groups: dict[int, list[str]] = {}
    for i, source in enumerate(sources):
        groups.setdefault(root(i), []).append(source)
    return list(groups.values())


def begin_cross_validation(
    items: Sequence[Item], features: Sequence[ItemFeatures], folds: int = 5
) -> dict[str, Any]:
    """K-fold cross-validation on BEGIN with folds cut by document: no snippet, and no document that snippets
    share text with, is on both sides of a fold. Documents go largest first to the fold with fewest items."""
    begin_items, begin_features = _subset(items, features, lambda item: item.dataset == "begin")
    items_of = Counter(item.source for item in begin_items)
    documents = begin_documents(sorted(items_of))
    rng = np.random.default_rng(0)
    order = sorted(rng.permutation(len(documents)), key=lambda d: -sum(items_of[s] for s in documents[d]))
    fold_items = [0] * folds
    fold_of: dict[str, int] = {}
    for d in order:
        fold = fold_items.index(min(fold_items))
        fold_items[fold] += sum(items_of[s] for s in documents[d])
        fold_of.update(dict.fromkeys(documents[d], fold))
    fold_scores = []
    truth_all: list[bool] = []
    predicted_all: list[bool] = []
    risk_all: list[float] = []
    for fold in range(folds):
        train = [i for i, item in enumerate(begin_items) if fold_of[item.source] != fold]
        test = [i for i, item in enumerate(begin_items) if fold_of[item.source] == fold]
        params = fit([begin_features[i] for i in train], [begin_items[i].supported for i in train])
        scores, predicted = item_scores([begin_features[i] for i in test], params)
        truth = [begin_items[i].supported for i in test]
        fold_scores.append(balanced_accuracy(truth, predicted))
        truth_all += truth
        predicted_all += list(predicted)
        risk_all += list(1.0 - scores)
    return {
        "folds": folds,
        "documents": len(documents),
        "mean_balanced_accuracy": round(100 * statistics.mean(fold_scores), 1),
        "pooled_balanced_accuracy": round(100 * balanced_accuracy(truth_all, predicted_all), 1),
        "pooled_auc": round(auc(truth_all, risk_all), 3),
    }


def speed(items: Sequence[Item], sample: int = 60) -> dict[str, Any]:
    """Claims judged per second end to end (cold sources), and the 6-claim / 8-passage answer latency."""
    from claimcheck.claims import split_claims
    from claimcheck.judges import local

    begin = [item for item in items if item.dataset == "begin"][:sample]
    local.forget_prepared_sources()
    started = time.perf_counter()
    claims = 0
    for item in begin:
        judged = local.judge_text(item.text, [item.source])
        claims += len(judged.votes)
    elapsed = time.perf_counter() - started

    # A realistic answer: eight ~80-word passages and six claims drawn from them (some altered).
    words = " ".join(item.source for item in items if item.dataset == "begin").split()
    passages = [" ".join(words[i * 80 : (i + 1) * 80]) for i in range(8)]
    answer_sentences = []
    for i in range(6):
        # Twenty words of passage i, kept as one sentence, cited to it.
        body = " ".join(passages[i].split()[5:25]).replace(".", ",").replace("?", ",").replace("!", ",")
        answer_sentences.append(f"According to the garden, {body.rstrip(',;: ')} [{i + 1}].")
    answer = " ".join(answer_sentences)
    sources = [Source(index=i + 1, text=passage) for i, passage in enumerate(passages)]
    split = split_claims(answer)
    cold, warm = [], []
    for _ in range(11):
        local.forget_prepared_sources()
        t0 = time.perf_counter()
        local.judge_claims(split, sources)
        cold.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        local.judge_claims(split, sources)
        warm.append(time.perf_counter() - t0)
    return {
        "claims_per_second": round(claims / elapsed, 1),
        "items_timed": len(begin),
        "answer_6_claims_8_passages_ms_median_cold": round(1000 * statistics.median(cold), 1),
        "answer_6_claims_8_passages_ms_median_sources_cached": round(1000 * statistics.median(warm), 1),
        "claims_in_answer": sum(c.is_claim for c in split),
    }


def end_to_end_agreement(
    items: Sequence[Item], features: Sequence[ItemFeatures], params: dict[str, Any], sample: int = 150
) -> dict[str, Any]:
    """Check on a sample that `judge_text` (the product path) decides items as the feature-level scoring does,
    and what the quote gate does to its votes there (`quote_gate_effect`)."""
    from claimcheck.judges import local

    rng = np.random.default_rng(1)
    chosen = sorted(rng.choice(len(items), size=min(sample, len(items)), replace=False).tolist())
    _, predicted = item_scores([features[i] for i in chosen], params)
    judged = [local.judge_text(items[i].text, [items[i].source]) for i in chosen]
    agree = sum(j.supported == bool(p) for j, p in zip(judged, predicted, strict=True))
    return {
        "items": len(chosen),
        "agreement": round(agree / len(chosen), 3),
        "quote_gate": quote_gate_effect([items[i] for i in chosen], judged),
    }


def quote_gate_effect(items: Sequence[Item], judged: Sequence[JudgedText]) -> dict[str, Any]:
    """The local judge's votes on `items` as it gives them and after the quote gate, as the panel runs them: the
    balanced accuracy of each (an item is supported when no vote is unverified, misattributed or contradicted),
    and how many supporting votes the gate turned down, by the flag it gave."""
    truth = [item.supported for item in items]
    gated_supported: list[bool] = []
    turned_down: Counter[str] = Counter()
    for item, judgement in zip(items, judged, strict=True):
        claims = [claim for claim in judgement.claims if claim.is_claim]
        sources = {1: Source(index=1, text=item.source)}
        gated = [gate_vote(v, sources, claim=c.text) for v, c in zip(judgement.votes, claims, strict=True)]
        for before, after in zip(judgement.votes, gated, strict=True):
            if before.status != after.status:
                turned_down.update(flag for flag in after.flags if flag not in before.flags)
        gated_supported.append(bool(gated) and all(v.status not in NOT_SUPPORTED for v in gated))
    return {
        "balanced_accuracy_as_judged": round(
            100 * balanced_accuracy(truth, [j.supported for j in judged]), 1
        ),
        "balanced_accuracy_after_the_gate": round(100 * balanced_accuracy(truth, gated_supported), 1),
        "votes": sum(len(j.votes) for j in judged),
        "votes_turned_down": dict(sorted(turned_down.items())),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--eval-dir", type=Path, default=DEFAULT_EVAL_DIR)
    parser.add_argument("--params", type=Path, default=PARAMS_PATH)
    parser.add_argument("--cache-dir", type=Path, default=None, help="keep computed features here")
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args(argv)
    set_single_thread()
    encoder_use()
    started = time.perf_counter()
    items = load_items(args.eval_dir.resolve())
    features = item_features(items, args.cache_dir)
    params = json.loads(args.params.read_text())
    report: dict[str, Any] = {
        "committed_params_in_sample": committed_report(items, features, params),
        "summedits_leave_one_domain_out": leave_one_domain_out(items, features, with_begin=False),
        "summedits_leave_one_domain_out_plus_begin": leave_one_domain_out(items, features, with_begin=True),
        "summedits_leave_one_domain_out_spread": leave_one_domain_out_spread(items, features),
        "begin_5_fold": begin_cross_validation(items, features),
    }
    if not args.skip_speed:
        report["judge_text_agrees_with_feature_scoring"] = end_to_end_agreement(items, features, params)
        report["speed"] = speed(items)
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
