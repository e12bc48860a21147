"""The citation gate on drafts that cite this repository's own files: verified, corrected and dropped against
labels made by hand, and how many fabricated citations survive it.

The drafts (`bench/data/citations.jsonl`) cite files at the commit their first line names, so the figures do
not move when the code does: each cited file is read from git at that commit (`git cat-file`) into a scratch
tree, and the gate audits the drafts against it. A label says what is true of a citation: `verified` (the line
holds what the sentence says), `corrected` (it is a few lines away: `right_line`) or `dropped` (fabricated: past
the file's end, a file that does not exist, or a line nowhere near what the sentence says).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final

from bench.timing import timed
from claimcheck.critics.base import CriticInput
from claimcheck.critics.citation_gate import audit_citations
from claimcheck.critics.citation_gate.items import CORRECTED, DROPPED, VERIFIED

DATA_FILE: Final = Path(__file__).resolve().parent / "data" / "citations.jsonl"
REPOSITORY: Final = Path(__file__).resolve().parent.parent
LABELS: Final = (VERIFIED, CORRECTED, DROPPED)
# What the gate did with a labelled citation it did not read as one at all: it stays in the draft, unaudited.
NOT_AUDITED: Final = "not audited"
# A correction to another line than the right one: kept, but not corrected.
CORRECTED_ELSEWHERE: Final = "corrected elsewhere"
# The kinds of a `dropped` label: the three ways a citation is fabricated.
FABRICATED_KINDS: Final = ("past-end", "missing-file", "wrong-line")
KINDS: Final = {VERIFIED: ("right",), CORRECTED: ("drift",), DROPPED: FABRICATED_KINDS}
# Passes over the whole set timed, at least: one pass is short, so one busy moment would move a single one.
MIN_TIMED_PASSES: Final = 5

COMMIT_MISSING: Final = (
    "The citations benchmark reads this repository at commit {commit}, which {repository} does not have (a "
    "shallow clone?): `git fetch --unshallow` fetches it."
)
GIT_FAILED: Final = "The citations benchmark could not read {path} at commit {commit} from git: {error}"
DATA_INVALID: Final = "{file}, line {number}: {problem}"


class CitationsError(Exception):
    """The benchmark cannot run: its data is malformed or its commit cannot be read. The message says why."""


@dataclass(frozen=True)
class Citation:
    """One citation of a draft and its hand-made label."""

    path: str
    line: int
    label: str
    kind: str
    right_line: int | None = None

    @property
    def fabricated(self) -> bool:
        return self.label == DROPPED


@dataclass(frozen=True)
class Draft:
    id: str
    text: str
    citations: tuple[Citation, ...]


@dataclass(frozen=True)
class CitationSet:
    commit: str
    drafts: tuple[Draft, ...]

    @property
    def paths(self) -> set[str]:
        return {citation.path for draft in self.drafts for citation in draft.citations}


def _citation(entry: dict[str, Any]) -> Citation:
    path, line, label, kind = entry["path"], entry["line"], entry["label"], entry["kind"]
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts:
        raise ValueError(f"{path} is not a path inside the repository")
    if label not in LABELS or kind not in KINDS[label]:
        raise ValueError(f"a {label!r} label of kind {kind!r}: labels are {LABELS}, kinds {KINDS}")
    right_line = entry.get("right_line")
    if (label == CORRECTED) != isinstance(right_line, int):
        raise ValueError("a corrected citation, and only one, gives its right_line")
    return Citation(path, int(line), label, kind, right_line)


def citations_load(path: Path = DATA_FILE) -> CitationSet:
    """The drafts and their labels; the first line names the commit they cite."""
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        commit = json.loads(lines[0])["commit"]
    except (IndexError, ValueError, KeyError, TypeError):
        raise CitationsError(DATA_INVALID.format(file=path, number=1, problem="no commit named")) from None
    drafts = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            citations = tuple(_citation(c) for c in entry["citations"])
            drafts.append(Draft(entry["id"], entry["text"], citations))
        except (ValueError, KeyError, TypeError) as error:
            raise CitationsError(DATA_INVALID.format(file=path, number=number, problem=error)) from None
    return CitationSet(commit, tuple(drafts))


def _git(repository: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repository), *args], capture_output=True, check=False)


def tree_write(repository: Path, commit: str, paths: Iterable[str], into: Path) -> None:
    """The files at `paths` as they were at `commit`, written under `into`; a path the commit does not have is
    left out, as a draft's made-up file is."""
    if _git(repository, "cat-file", "-e", f"{commit}^{{commit}}").returncode:
        raise CitationsError(COMMIT_MISSING.format(commit=commit, repository=repository))
    for path in sorted(paths):
        if _git(repository, "cat-file", "-e", f"{commit}:{path}").returncode:
            continue
        done = _git(repository, "cat-file", "blob", f"{commit}:{path}")
        if done.returncode:
            error = done.stderr.decode(errors="replace").strip()
            raise CitationsError(GIT_FAILED.format(path=path, commit=commit, error=error))
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(done.stdout)


def drafts_audit(drafts: Sequence[Draft], tree: Path) -> list[list[dict[str, Any]]]:
    """The citation gate's `path:line` items for each draft, audited against `tree`."""
    return [
        [item for item in audit_citations(_input(draft, tree)).details["items"] if item["kind"] == "path"]
        for draft in drafts
    ]


def _input(draft: Draft, tree: Path) -> CriticInput:
    return CriticInput(draft.text, {}, frozenset(), source_tree=tree)


def _outcome(citation: Citation, item: dict[str, Any] | None) -> str:
    """What the gate made of a citation, in the labels' words."""
    if item is None:
        return NOT_AUDITED
    status = str(item["status"])
    if status == CORRECTED == citation.label and item["corrected_to"]["line"] != citation.right_line:
        return CORRECTED_ELSEWHERE
    return status


def _matched(draft: Draft, items: list[dict[str, Any]]) -> tuple[list[dict[str, Any] | None], int]:
    """Each labelled citation's item (by its `path:line`, in order), and how many items no label names."""
    left = list(items)
    found: list[dict[str, Any] | None] = []
    for citation in draft.citations:
        cited = f"{citation.path}:{citation.line}"
        item = next((i for i in left if _cites(i, cited)), None)
        if item is not None:
            left.remove(item)
        found.append(item)
    return found, len(left)


def _cites(item: dict[str, Any], cited: str) -> bool:
    """Whether the gate's item is the citation `path:line`, alone or with a description."""
    reference = str(item["reference"])
    return reference == cited or reference.startswith(cited + " - ")


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def citations_score(drafts: Sequence[Draft], audited: Sequence[list[dict[str, Any]]]) -> dict[str, Any]:
    """The gate's outcomes against the labels: per label, the fabricated citations that survive, the right ones
    lost, and every citation the gate got wrong."""
    pairs: list[tuple[Draft, Citation, str, dict[str, Any] | None]] = []
    unlabelled = 0
    for draft, items in zip(drafts, audited, strict=True):
        found, extra = _matched(draft, items)
        unlabelled += extra
        pairs += [(draft, c, _outcome(c, item), item) for c, item in zip(draft.citations, found, strict=True)]
    confusion = {label: Counter[str]() for label in LABELS}
    for _, citation, outcome, _ in pairs:
        confusion[citation.label][outcome] += 1
    labels = {}
    for label in LABELS:
        expected = sum(confusion[label].values())
        # A correction to another line than the labelled one is one the gate made all the same.
        given = (label, CORRECTED_ELSEWHERE) if label == CORRECTED else (label,)
        got = sum(counts[outcome] for counts in confusion.values() for outcome in given)
        right = confusion[label][label]
        labels[label] = {
            "expected": expected,
            "got": got,
            "right": right,
            "precision": _share(right, got),
            "recall": _share(right, expected),
        }
    fabricated = [(c, outcome) for _, c, outcome, _ in pairs if c.fabricated]
    survived = [c for c, outcome in fabricated if outcome != DROPPED]
    kept = [outcome for _, _, outcome, _ in pairs if outcome != DROPPED]
    genuine = [outcome for _, c, outcome, _ in pairs if not c.fabricated]
    return {
        "drafts": len(drafts),
        "citations": len(pairs),
        "labels": labels,
        "confusion": {label: dict(sorted(counts.items())) for label, counts in confusion.items()},
        "fabricated": {
            "total": len(fabricated),
            "by_kind": {
                kind: {
                    "total": sum(c.kind == kind for c, _ in fabricated),
                    "survived": sum(c.kind == kind for c in survived),
                }
                for kind in FABRICATED_KINDS
            },
            "survived": len(survived),
            "survived_share": _share(len(survived), len(fabricated)),
            # Without the gate every citation is kept: this share of them is fabricated.
            "share_of_citations_before_gate": _share(len(fabricated), len(pairs)),
            "share_of_kept_after_gate": _share(len(survived), len(kept)),
        },
        "genuine_dropped": sum(outcome == DROPPED for outcome in genuine),
        "genuine_dropped_share": _share(sum(outcome == DROPPED for outcome in genuine), len(genuine)),
        "unlabelled_items": unlabelled,
        "mistakes": [
            {
                "draft": draft.id,
                "citation": f"{c.path}:{c.line}",
                "expected": c.label if c.label != CORRECTED else f"{CORRECTED} to {c.right_line}",
                "got": outcome
                if item is None or outcome not in (CORRECTED, CORRECTED_ELSEWHERE)
                else f"{outcome} to {item['corrected_to']['line']}",
                "reason": item["reason"] if item else None,
            }
            for draft, c, outcome, item in pairs
            if outcome != c.label
        ],
    }


def bench_citations(runs: int, data: Path = DATA_FILE, repository: Path = REPOSITORY) -> dict[str, Any]:
    """The gate's figures on the labelled drafts, and the time one pass over them takes (median of the runs)."""
    citation_set = citations_load(data)
    drafts = citation_set.drafts
    with tempfile.TemporaryDirectory(prefix="bench-citations-") as scratch:
        tree = Path(scratch)
        tree_write(repository, citation_set.commit, citation_set.paths, tree)
        report = {"commit": citation_set.commit, **citations_score(drafts, drafts_audit(drafts, tree))}
        passes = [timed(drafts_audit, drafts, tree)[0] / 1000 for _ in range(max(runs, MIN_TIMED_PASSES))]
    seconds = statistics.median(passes)
    report["audit_seconds"] = round(seconds, 4)
    report["citations_per_second"] = round(report["citations"] / seconds, 1)
    return report
