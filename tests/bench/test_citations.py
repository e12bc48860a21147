"""The citations benchmark: drafts citing a repository at a pinned commit, the gate's outcomes scored against
hand-made labels, and the shipped set's labels true of the files they cite."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.citations import (
    COMMIT_MISSING,
    DATA_FILE,
    DATA_INVALID,
    FABRICATED_KINDS,
    REPOSITORY,
    CitationsError,
    bench_citations,
    citations_load,
)

AUTHOR = {
    "GIT_AUTHOR_NAME": "Ada Beekeeper",
    "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada Beekeeper",
    "GIT_COMMITTER_EMAIL": "ada@example.org",
}

GATE_PY = """\
\"\"\"The refusal gate.\"\"\"

THRESHOLD = 0.42


def refusal_gate(topics, articles):
    if topics or articles:
        return None
    return REFUSAL


REFUSAL = "Nothing in the garden."


def cosine(a, b):
    total = 0.0
    for x, y in zip(a, b):
        total += x * y
    return total


def norm(a):
    return cosine(a, a) ** 0.5
"""


def _git(repository: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repository,
        env={**os.environ, **AUTHOR},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def _commit(repository: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repository / name).parent.mkdir(parents=True, exist_ok=True)
        (repository / name).write_text(text, encoding="utf-8")
    _git(repository, "add", "--all")
    _git(repository, "commit", "--quiet", "--message", "a step")
    return _git(repository, "rev-parse", "HEAD")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "--quiet", "--initial-branch=main")
    return root


def _data(path: Path, commit: str, drafts: list[tuple[str, list[dict[str, Any]]]]) -> Path:
    lines = [json.dumps({"commit": commit})]
    lines += [
        json.dumps({"id": f"d{number}", "text": text, "citations": citations})
        for number, (text, citations) in enumerate(drafts, start=1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _cite(
    line: int, label: str, kind: str, right_line: int | None = None, path: str = "gate.py"
) -> dict[str, Any]:
    citation: dict[str, Any] = {"path": path, "line": line, "label": label, "kind": kind}
    if right_line is not None:
        citation["right_line"] = right_line
    return citation


DRAFTS = [
    ("`refusal_gate` is defined at gate.py:6.", [_cite(6, "verified", "right")]),
    ("- `gate.py:3 - THRESHOLD 0.42`", [_cite(3, "verified", "right")]),
    ("The cut-off `THRESHOLD` is set at gate.py:5.", [_cite(5, "corrected", "drift", 3)]),
    ("`refusal_gate` is at gate.py:40.", [_cite(40, "dropped", "past-end")]),
    ("`refusal_gate` is in refusal.py:6.", [_cite(6, "dropped", "missing-file", path="refusal.py")]),
    # What the sentence names is fourteen lines away: no drift, a made-up line.
    ("`THRESHOLD` is set at gate.py:17.", [_cite(17, "dropped", "wrong-line")]),
    # It names no code, so the gate can check only that the line exists: a fabrication it lets through.
    ("The gate's threshold is read at gate.py:11.", [_cite(11, "dropped", "wrong-line")]),
]


def test_the_gate_is_scored_against_the_labels_on_the_files_at_the_pinned_commit(
    repository: Path, tmp_path: Path
) -> None:
    pinned = _commit(repository, {"gate.py": GATE_PY})
    # Afterwards the code moves and refusal.py appears: the benchmark must not see either.
    _commit(repository, {"gate.py": "\n\n\n" + GATE_PY, "refusal.py": GATE_PY})
    data = _data(tmp_path / "citations.jsonl", pinned, DRAFTS)

    report = bench_citations(1, data=data, repository=repository)

    assert report["commit"] == pinned
    assert (report["drafts"], report["citations"], report["unlabelled_items"]) == (7, 7, 0)
    assert report["labels"]["verified"] == {
        "expected": 2,
        "got": 3,
        "right": 2,
        "precision": 0.667,
        "recall": 1.0,
    }
    assert report["labels"]["corrected"] == {
        "expected": 1,
        "got": 1,
        "right": 1,
        "precision": 1.0,
        "recall": 1.0,
    }
    assert report["labels"]["dropped"] == {
        "expected": 4,
        "got": 3,
        "right": 3,
        "precision": 1.0,
        "recall": 0.75,
    }
    fabricated = report["fabricated"]
    assert fabricated["by_kind"] == {
        "past-end": {"total": 1, "survived": 0},
        "missing-file": {"total": 1, "survived": 0},
        "wrong-line": {"total": 2, "survived": 1},
    }
    assert (fabricated["total"], fabricated["survived"], fabricated["survived_share"]) == (4, 1, 0.25)
    # Four of seven citations are made up; after the gate, one of the four it keeps.
    assert fabricated["share_of_citations_before_gate"] == 0.571
    assert fabricated["share_of_kept_after_gate"] == 0.25
    assert (report["genuine_dropped"], report["genuine_dropped_share"]) == (0, 0.0)
    assert report["mistakes"] == [
        {
            "draft": "d7",
            "citation": "gate.py:11",
            "expected": "dropped",
            "got": "verified",
            "reason": "nothing-to-check",
        }
    ]
    assert report["audit_seconds"] > 0 and report["citations_per_second"] > 0


def test_a_correction_to_another_line_than_the_right_one_is_not_counted_right(
    repository: Path, tmp_path: Path
) -> None:
    pinned = _commit(repository, {"gate.py": GATE_PY})
    # `REFUSAL` is on line 9 too (`return REFUSAL`), nearer than its definition on line 12.
    drafts = [("`REFUSAL` is defined at gate.py:8.", [_cite(8, "corrected", "drift", 12)])]
    report = bench_citations(1, data=_data(tmp_path / "c.jsonl", pinned, drafts), repository=repository)
    assert report["labels"]["corrected"] == {
        "expected": 1,
        "got": 1,
        "right": 0,
        "precision": 0.0,
        "recall": 0.0,
    }
    assert report["confusion"]["corrected"] == {"corrected elsewhere": 1}
    assert report["mistakes"][0]["got"] == "corrected elsewhere to 9"


def test_a_commit_the_clone_does_not_have_is_a_clear_error(repository: Path, tmp_path: Path) -> None:
    _commit(repository, {"gate.py": GATE_PY})
    absent = "0123456789abcdef0123456789abcdef01234567"
    data = _data(tmp_path / "c.jsonl", absent, DRAFTS[:1])
    with pytest.raises(CitationsError) as raised:
        bench_citations(1, data=data, repository=repository)
    assert str(raised.value) == COMMIT_MISSING.format(commit=absent, repository=repository)


def test_a_malformed_label_is_refused_with_its_line(tmp_path: Path) -> None:
    data = _data(tmp_path / "c.jsonl", "abc", [("x.py:1 - x", [_cite(1, "corrected", "drift")])])
    with pytest.raises(CitationsError) as raised:
        citations_load(data)
    assert str(raised.value).startswith(DATA_INVALID.format(file=data, number=2, problem="")[:-1])


def _lines_at(commit: str, path: str) -> int | None:
    done = subprocess.run(
        ["git", "-C", str(REPOSITORY), "cat-file", "blob", f"{commit}:{path}"],
        capture_output=True,
        check=False,
    )
    return None if done.returncode else len(done.stdout.decode().splitlines())


def test_the_shipped_set_is_large_a_third_made_up_and_its_labels_true_of_the_pinned_files() -> None:
    citation_set = citations_load(DATA_FILE)
    citations = [c for draft in citation_set.drafts for c in draft.citations]
    ids = [draft.id for draft in citation_set.drafts]
    assert len(ids) >= 60 and len(set(ids)) == len(ids)
    assert len(citation_set.commit) == 40
    assert 0.25 <= sum(c.fabricated for c in citations) / len(citations) <= 0.4
    assert {c.kind for c in citations if c.fabricated} == set(FABRICATED_KINDS)
    known = subprocess.run(
        ["git", "-C", str(REPOSITORY), "cat-file", "-e", f"{citation_set.commit}^{{commit}}"], check=False
    )
    if known.returncode:
        pytest.fail(COMMIT_MISSING.format(commit=citation_set.commit, repository=REPOSITORY))
    lengths = {path: _lines_at(citation_set.commit, path) for path in citation_set.paths}
    for c in citations:
        length = lengths[c.path]
        where = f"{c.path}:{c.line} ({c.kind})"
        if c.kind == "missing-file":
            assert length is None, where
            continue
        assert length is not None, where
        if c.kind == "past-end":
            assert c.line > length, where
        else:
            assert 1 <= c.line <= length, where
        if c.kind == "drift":
            assert c.right_line is not None and 1 <= abs(c.right_line - c.line) <= 5, where
