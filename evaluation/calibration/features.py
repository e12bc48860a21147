"""Loading the evaluation JSONL files and turning each item into per-claim feature rows."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from claimcheck import claims
from claimcheck.claims import split_claims
from claimcheck.judges import local as local_judge
from claimcheck.judges.local import FEATURE_NAMES, WORD_REPRESENTATION_SIZE
from claimcheck.judges.local.alignment import align
from claimcheck.judges.local.encoding import encode
from claimcheck.judges.local.sources import prepare_sources
from text.markup import strip_citations
from verifier import encoder
from verifier.encoder import judge_backend

# As the JUDGE_EVAL_DIR setting: the benchmarks beside the checkout, unless the environment says where they are.
DEFAULT_EVAL_DIR = Path(
    os.environ.get("JUDGE_EVAL_DIR", Path(__file__).resolve().parents[2] / ".." / "shared" / "eval")
)
# The code a feature row comes from: a cached row is stale when any of it changes.
FEATURE_CODE = (
    *sorted(Path(local_judge.__file__).resolve().parent.glob("*.py")),
    Path(__file__).resolve().parent / "features.py",
    Path(claims.__file__).resolve(),
    Path(encoder.__file__).resolve(),
)


@dataclass(frozen=True)
class Item:
    """One benchmark item: a source, a text and whether the text is fully supported by the source."""

    id: str
    dataset: str
    domain: str
    source: str
    text: str
    supported: bool


def set_single_thread() -> None:
    """Pin BLAS, OpenMP and torch to one thread (the machine is shared; results must not depend on cores)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    import torch
    from threadpoolctl import threadpool_limits

    # numpy is already imported, so the variables above come too late for its BLAS: limit it directly.
    threadpool_limits(1)
    torch.set_num_threads(1)


def load_items(eval_dir: Path) -> list[Item]:
    """All items of the `*.jsonl` files in `eval_dir`; BEGIN's "generic" counts as not supported."""
    items = []
    for path in sorted(eval_dir.glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                row = json.loads(line)
                items.append(
                    Item(
                        id=row["id"],
                        dataset=row["dataset"],
                        domain=row["domain"],
                        source=row["source"],
                        text=row["text"],
                        supported=row["label"] == "supported",
                    )
                )
    if not items:
        raise SystemExit(f"no evaluation items found in {eval_dir}")
    return items


@dataclass(frozen=True)
class ItemFeatures:
    """One item's claims: feature rows `(n_claims, n_features)` and each claim's novel-word representations."""

    rows: npt.NDArray[np.float64]
    words: tuple[npt.NDArray[np.float32], ...]


def claim_evidence(
    claims: Sequence[str], source: str
) -> list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float32]]]:
    """Per claim, its features against `source` and its novel-word representations (as the judge aligns it)."""
    prepared = prepare_sources([source])[0]
    analysed = encode([strip_citations(c) for c in claims])
    alignments = [align(claim, prepared) for claim in analysed]
    return [(a.features, a.novel_words) for a in alignments]


def items_key(items: Sequence[Item]) -> str:
    """A short key naming these items, the feature names, the judge's embedding backend and the code that
    computes them (for files computed from their features)."""
    digest = hashlib.sha256(
        json.dumps([FEATURE_NAMES, judge_backend(), [(i.id, i.source, i.text) for i in items]]).encode()
    )
    for path in FEATURE_CODE:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def item_features(items: Sequence[Item], cache_dir: Path | None = None) -> list[ItemFeatures]:
    """Per item, its claims' features (no rows when the text has no checkable claim).

    Items are processed grouped by source so each source is embedded once. With `cache_dir`, results are
    kept in a file keyed by the items and the feature names, to speed up repeated experiments.
    """
    cache_file = cache_dir / f"features-{items_key(items)}.npz" if cache_dir else None
    with computed_once(cache_file):
        if cache_file and cache_file.exists():
            return _load(cache_file, len(items))
        empty = ItemFeatures(np.zeros((0, len(FEATURE_NAMES))), ())
        results: list[ItemFeatures] = [empty] * len(items)
        for index in sorted(range(len(items)), key=lambda i: items[i].source):
            item = items[index]
            claims = [c.text for c in split_claims(item.text) if c.is_claim]
            if claims:
                evidence = claim_evidence(claims, item.source)
                results[index] = ItemFeatures(
                    np.stack([f for f, _ in evidence]), tuple(w for _, w in evidence)
                )
        if cache_file:
            _save(cache_file, results)
        return results


@contextlib.contextmanager
def computed_once(cache_file: Path | None) -> Iterator[None]:
    """Held while a cache file is looked for and, when missing, computed and written: another process that wants
    the same file (a second retraining, a parallel test) waits, then reads it, rather than computing it again."""
    if cache_file is None:
        yield
        return
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    with cache_file.with_name(cache_file.name + ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        yield


def _save(path: Path, results: Sequence[ItemFeatures]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    claim_counts = np.array([len(r.rows) for r in results])
    word_counts = np.array([len(w) for r in results for w in r.words])
    rows = np.concatenate([r.rows for r in results])
    words = [w for r in results for w in r.words]
    stacked = np.concatenate(words) if words else np.zeros((0, WORD_REPRESENTATION_SIZE), np.float32)
    np.savez_compressed(path, claim_counts=claim_counts, word_counts=word_counts, rows=rows, words=stacked)


def _load(path: Path, n_items: int) -> list[ItemFeatures]:
    stored = np.load(path)
    claim_bounds = np.concatenate([[0], np.cumsum(stored["claim_counts"])])
    word_bounds = np.concatenate([[0], np.cumsum(stored["word_counts"])])
    rows, words = stored["rows"], stored["words"]
    results = []
    for i in range(n_items):
        first, last = int(claim_bounds[i]), int(claim_bounds[i + 1])
        claim_words = tuple(words[word_bounds[c] : word_bounds[c + 1]] for c in range(first, last))
        results.append(ItemFeatures(rows[first:last], claim_words))
    return results
