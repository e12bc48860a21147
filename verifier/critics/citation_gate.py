"""The `citation_gate` check (warn): every citation and quote in the answer is audited against its source.

Three kinds of item are audited, each ending verified (at its original location), corrected or dropped:

- `[n]` citations. The source must exist and its article must be in the garden; the text the citation ends
  (the whole sentence, or when the sentence has several citations the words since the previous one) must
  be supported by the cited passage: at least half of its content words found there and every number
  verbatim. When the passage does not support it, another numbered source or another place in the same
  article (`article_text`) that does corrects the citation; when none does, it is dropped.
- Quoted passages ("...", “...” of at least 12 characters): found verbatim, or fuzzily (rapidfuzz
  `partial_ratio` >= 92 with the quote's numbers and negations intact), in any source; otherwise dropped as a
  fabrication.
- `path:line - description` citations against `source_tree`: the file must be inside the tree (no `..`, no
  absolute path, no symlink out of it; nothing outside is ever opened) and the line must exist; the
  description's content words must be on that line, else on a line within 5 of it (corrected), else dropped.

The check passes when nothing is dropped. Pure Python: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final

from rapidfuzz import fuzz

from garden.importer import slugify
from verifier.claims import split_sentences
from verifier.critics.base import (
    WARN,
    Critic,
    CriticInput,
    Finding,
    SourcePassage,
    Words,
    blank_code,
    citation_markers,
    content_words,
    numbers_in,
    plural,
)
from verifier.critics.fabricated_reference import NAMED_ARTICLE

__all__ = [
    "CHECK",
    "FUZZY_QUOTE_SCORE",
    "LINE_RADIUS",
    "MIN_QUOTE_CHARS",
    "NAME",
    "SEVERITY",
    "SUPPORT_THRESHOLD",
    "audit_citations",
]

NAME: Final = "citation_gate"
SEVERITY: Final = WARN

SUPPORT_THRESHOLD: Final = 0.5
# With several sources cited together, each must carry at least this share of the claim on its own.
JOINT_SHARE: Final = 0.25
FUZZY_QUOTE_SCORE: Final = 92.0
MIN_QUOTE_CHARS: Final = 12
LINE_RADIUS: Final = 5
MAX_FILE_BYTES: Final = 2_000_000
EXCERPT_CHARS: Final = 200

NOTHING_MESSAGE: Final = "The answer has no citations or quotes to audit."
SUMMARY_MESSAGE: Final = "{total}: {verified} verified at original location, {corrected} corrected, {dropped} dropped; {fabrications} caught."

VERIFIED: Final = "verified"
CORRECTED: Final = "corrected"
DROPPED: Final = "dropped"

# Why an item ended as it did (the `reason` of each item in `details["items"]`).
SUPPORTED: Final = "supported"
SUPPORTED_JOINTLY: Final = "supported-jointly"
NOTHING_TO_CHECK: Final = "nothing-to-check"
FOUND_IN_OTHER_SOURCE: Final = "found-in-other-source"
FOUND_ELSEWHERE_IN_ARTICLE: Final = "found-elsewhere-in-article"
NO_SUCH_SOURCE: Final = "no-such-source"
ARTICLE_MISSING: Final = "article-missing"
UNSUPPORTED: Final = "unsupported"
QUOTE_FOUND: Final = "quote-found"
QUOTE_NOT_FOUND: Final = "quote-not-found"
LINE_MATCHES: Final = "line-matches"
FOUND_NEARBY: Final = "found-nearby"
NOTHING_NEARBY: Final = "nothing-nearby"
NO_SOURCE_TREE: Final = "no-source-tree"
OUTSIDE_TREE: Final = "outside-tree"
FILE_MISSING: Final = "file-missing"
FILE_UNREADABLE: Final = "file-unreadable"
LINE_MISSING: Final = "line-missing"


@dataclass
class _Item:
    kind: str
    reference: str
    start: int
    end: int
    status: str
    reason: str
    fabricated: bool = False
    corrected_to: dict[str, Any] | None = None
    score: float | None = None
    found_in: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "kind": self.kind,
            "reference": self.reference,
            "start": self.start,
            "end": self.end,
            "status": self.status,
            "reason": self.reason,
            "fabricated": self.fabricated,
        }
        if self.corrected_to is not None:
            item["corrected_to"] = self.corrected_to
        if self.found_in is not None:
            item["found_in"] = self.found_in
        if self.score is not None:
            item["score"] = round(self.score, 3)
        return item


def audit_citations(critic_input: CriticInput) -> Finding:
    """Audit every citation and quote of the answer; the summary and each item's fate go in `details`."""
    answer = critic_input.answer
    items = [
        *_audit_numbered(critic_input),
        *_audit_quotes(answer, critic_input.sources, critic_input.article_slugs),
        *_audit_paths(answer, critic_input.source_tree),
    ]
    items.sort(key=lambda item: (item.start, item.end))
    counts = {
        status: sum(item.status == status for item in items) for status in (VERIFIED, CORRECTED, DROPPED)
    }
    fabrications = sum(item.fabricated for item in items)
    details: dict[str, Any] = {
        "total": len(items),
        "verified": counts[VERIFIED],
        "corrected": counts[CORRECTED],
        "dropped": counts[DROPPED],
        "fabrications_caught": fabrications,
        "items": [item.as_dict() for item in items],
    }
    if not items:
        return Finding(passed=True, message=NOTHING_MESSAGE, details=details)
    message = SUMMARY_MESSAGE.format(
        total=plural(len(items), "citation"),
        verified=counts[VERIFIED],
        corrected=counts[CORRECTED],
        dropped=counts[DROPPED],
        fabrications=plural(fabrications, "fabrication"),
    )
    return Finding(passed=counts[DROPPED] == 0, message=message, details=details)


# --- [n] citations -------------------------------------------------------------------------------------


class _Texts:
    """Content words of source passages and article sentences, computed once per audit."""

    def __init__(self, sources: Mapping[int, SourcePassage]) -> None:
        self.sources = sources
        self.passages = {number: content_words(source.text) for number, source in sources.items()}
        self._windows: dict[int, list[tuple[int, int, Words]]] = {}

    def windows(self, number: int) -> list[tuple[int, int, Words]]:
        """Runs of one to three consecutive sentences of source `number`'s article, with their words."""
        if number not in self._windows:
            text = self.sources[number].article_text
            sentences = [(start, end, content_words(text[start:end])) for start, end in split_sentences(text)]
            windows = []
            for size in (1, 2, 3):
                for first in range(len(sentences) - size + 1):
                    run = sentences[first : first + size]
                    words = run[0][2]
                    for _, _, more in run[1:]:
                        words = words | more
                    windows.append((run[0][0], run[-1][1], words))
            self._windows[number] = windows
        return self._windows[number]


def _audit_numbered(critic_input: CriticInput) -> Iterator[_Item]:
    answer = critic_input.answer
    texts = _Texts(critic_input.sources)
    for claim, runs in _claims(answer):
        for run in runs:
            existing = [n for n in run.numbers if n in critic_input.sources]
            joint = None
            if len(existing) > 1:
                joint = texts.passages[existing[0]]
                for n in existing[1:]:
                    joint = joint | texts.passages[n]
            for number in run.numbers:
                yield _audit_one(critic_input, texts, run.claim or claim, number, joint, run.start, run.end)


@dataclass(frozen=True)
class _Run:
    """Adjacent citation markers (`[1][3]`) and the words they cite, when a sentence has several such runs."""

    start: int
    end: int
    numbers: tuple[int, ...]
    claim: Words | None


def _claims(answer: str) -> Iterator[tuple[Words, list[_Run]]]:
    """Each sentence that has citations: its words, and its runs of markers with the text each one ends."""
    markers = citation_markers(answer)
    if not markers:
        return
    for start, end in split_sentences(answer):
        inside = [marker for marker in markers if start <= marker[0] < end]
        if not inside:
            continue
        runs: list[list[tuple[int, int, tuple[int, ...]]]] = []
        for marker in inside:
            if runs and not answer[runs[-1][-1][1] : marker[0]].strip():
                runs[-1].append(marker)
            else:
                runs.append([marker])
        sentence = content_words(_without_markers(answer, start, end, inside))
        result = []
        for index, run in enumerate(runs):
            numbers = tuple(dict.fromkeys(n for marker in run for n in marker[2]))
            claim = None
            if len(runs) > 1:
                # A run cites the words since the previous run; when there are none ("According to [1], ...")
                # it cites the words up to the next run.
                previous = runs[index - 1][-1][1] if index else start
                following = runs[index + 1][0][0] if index + 1 < len(runs) else end
                for piece_start, piece_end in ((previous, run[0][0]), (run[-1][1], following)):
                    words = content_words(_without_markers(answer, piece_start, piece_end, inside))
                    if words.words or words.numbers:
                        claim = words
                        break
            result.append(_Run(start=run[0][0], end=run[-1][1], numbers=numbers, claim=claim))
        yield sentence, result


def _without_markers(
    answer: str, start: int, end: int, markers: list[tuple[int, int, tuple[int, ...]]]
) -> str:
    pieces = []
    position = start
    for marker_start, marker_end, _ in markers:
        if marker_end <= start or marker_start >= end:
            continue
        pieces.append(answer[position:marker_start])
        position = marker_end
    pieces.append(answer[position:end])
    return " ".join(pieces)


def _audit_one(
    critic_input: CriticInput,
    texts: _Texts,
    claim: Words,
    number: int,
    joint: Words | None,
    start: int,
    end: int,
) -> _Item:
    item = _Item(kind="citation", reference=f"[{number}]", start=start, end=end, status=DROPPED, reason="")
    source = critic_input.sources.get(number)
    if source is None:
        item.reason, item.fabricated = NO_SUCH_SOURCE, True
        return item
    if source.article_slug not in critic_input.article_slugs:
        item.reason, item.fabricated = ARTICLE_MISSING, True
        return item
    if not claim.words and not claim.numbers:
        item.status, item.reason = VERIFIED, NOTHING_TO_CHECK
        return item
    share = claim.support(texts.passages[number])
    item.score = share
    if share >= SUPPORT_THRESHOLD:
        item.status, item.reason = VERIFIED, SUPPORTED
        return item
    # Cited together, each source may carry part of the claim (and its numbers may be in the other one).
    own_share = claim.support(texts.passages[number], numbers=False)
    if joint is not None and own_share >= JOINT_SHARE and claim.support(joint) >= SUPPORT_THRESHOLD:
        item.status, item.reason = VERIFIED, SUPPORTED_JOINTLY
        return item

    # Another numbered source that says it: the citation's number is wrong. Ties go to the lowest number.
    others = [
        (claim.support(words), -other, other)
        for other, words in texts.passages.items()
        if other != number and critic_input.sources[other].article_slug in critic_input.article_slugs
    ]
    best_other = max((entry for entry in others if entry[0] >= SUPPORT_THRESHOLD), default=None)
    if best_other is not None:
        other_share, _, other = best_other
        item.status, item.reason, item.score = CORRECTED, FOUND_IN_OTHER_SOURCE, other_share
        item.corrected_to = {"source": other, "article_slug": critic_input.sources[other].article_slug}
        return item

    # Elsewhere in the cited article: the anchor is wrong. Best support first, then the shortest (most
    # precise) window, then the earliest.
    windows = [
        (claim.support(words), -(window_end - window_start), -window_start, window_end)
        for window_start, window_end, words in texts.windows(number)
    ]
    best_window = max((entry for entry in windows if entry[0] >= SUPPORT_THRESHOLD), default=None)
    if best_window is not None:
        window_share, _, negative_start, window_end = best_window
        window_start = -negative_start
        item.status, item.reason, item.score = CORRECTED, FOUND_ELSEWHERE_IN_ARTICLE, window_share
        item.corrected_to = {
            "source": number,
            "article_slug": source.article_slug,
            "start": window_start,
            "end": window_end,
            "excerpt": source.article_text[window_start:window_end][:EXCERPT_CHARS],
        }
        return item
    item.reason = UNSUPPORTED
    return item


# --- quoted passages -----------------------------------------------------------------------------------

_QUOTE = re.compile(r"\"(?P<straight>[^\"\n]+)\"|“(?P<curly>[^”\n]+)”")
_CHAR_MAP: Final = str.maketrans(
    {"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "‐": "-", "*": None}
)
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…|\[\.\.\.\]|\[…\])\s*")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nor|neither|without|cannot)\b|n't\b")


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.translate(_CHAR_MAP)).strip().casefold()


def _audit_quotes(
    answer: str, sources: Mapping[int, SourcePassage], article_slugs: frozenset[str]
) -> Iterator[_Item]:
    visible = blank_code(answer)
    # Quoted article names ("the article “Funding grants”") are names, not quotations; whether the named
    # article exists is the `fabricated_reference` check's business.
    names = [match.span() for match in NAMED_ARTICLE.finditer(visible)]
    titles = {slugify(source.title) for source in sources.values()} | article_slugs
    haystacks: list[tuple[int, str, str]] = []
    for number, source in sorted(sources.items()):
        haystacks.append((number, "passage", _normalise(source.text)))
        if source.article_text:
            haystacks.append((number, "article", _normalise(source.article_text)))
    for match in _QUOTE.finditer(visible):
        quote = (match.group("straight") or match.group("curly") or "").strip()
        if len(quote) < MIN_QUOTE_CHARS or slugify(quote) in titles:
            continue
        if any(start <= match.start() < end for start, end in names):
            continue
        item = _Item(
            kind="quote",
            reference=f"“{quote}”",
            start=match.start(),
            end=match.end(),
            status=DROPPED,
            reason=QUOTE_NOT_FOUND,
            fabricated=True,
        )
        # An elided quote ("the line ... was closed") must have each of its pieces in one source.
        fragments = [_normalise(piece) for piece in _ELLIPSIS.split(quote)]
        fragments = [fragment for fragment in fragments if fragment.strip(" .,;:")]
        for number, where, haystack in haystacks:
            scores = [_find(fragment, haystack) for fragment in fragments]
            found = [score for score in scores if score is not None]
            if fragments and len(found) == len(fragments):
                item.status, item.reason, item.fabricated = VERIFIED, QUOTE_FOUND, False
                item.score = min(found) / 100
                item.found_in = {"source": number, "in": where}
                break
        yield item


def _find(fragment: str, haystack: str) -> float | None:
    """The score (0-100) at which `fragment` is in `haystack`, or None when it is not there."""
    if fragment in haystack:
        return 100.0
    if len(fragment) < MIN_QUOTE_CHARS or len(fragment) > len(haystack):
        return None
    alignment = fuzz.partial_ratio_alignment(fragment, haystack, score_cutoff=FUZZY_QUOTE_SCORE)
    if alignment is None:
        return None
    window = haystack[alignment.dest_start : alignment.dest_end]
    # A changed year or an added "not" scores high but says something else.
    if not numbers_in(fragment) <= numbers_in(window):
        return None
    if len(_NEGATION.findall(fragment)) != len(_NEGATION.findall(window)):
        return None
    return float(alignment.score)


# --- path:line citations -------------------------------------------------------------------------------

# `garden/retrieval.py:42 - the gate`, optionally in backticks. The path needs a folder or an extension, and
# the dash needs spaces around it, so times ("10:30 - tea") and verses ("John 3:16 - ...") are not read as one.
_PATH_CITATION = re.compile(
    r"(?<![\w/.:~-])`?(?P<path>(?:\.{1,2}/|/|~/)?[\w.-]+(?:/[\w.-]+)*):(?P<line>\d{1,7})`?"
    r"[ \t]+[-–—][ \t]+(?P<description>[^\n`\[]+)"
)


def _audit_paths(answer: str, source_tree: Path | None) -> Iterator[_Item]:
    lines_by_file: dict[Path, list[str] | None] = {}
    for match in _PATH_CITATION.finditer(answer):
        path = match.group("path")
        if "/" not in path and not re.search(r"\.[A-Za-z]\w*$", path):
            continue
        line = int(match.group("line"))
        description = match.group("description").strip().rstrip(".,;:")
        item = _Item(
            kind="path",
            reference=f"{path}:{line} - {description}",
            start=match.start(),
            end=match.end(),
            status=DROPPED,
            reason="",
            fabricated=True,
        )
        yield _audit_path(item, path, line, description, source_tree, lines_by_file)


def _audit_path(
    item: _Item,
    path: str,
    line: int,
    description: str,
    source_tree: Path | None,
    lines_by_file: dict[Path, list[str] | None],
) -> _Item:
    if source_tree is None:
        item.reason = NO_SOURCE_TREE
        return item
    target = _inside(source_tree, path)
    if target is None:
        item.reason = OUTSIDE_TREE
        return item
    if target not in lines_by_file:
        lines_by_file[target] = _read_lines(target) if target.is_file() else None
    lines = lines_by_file[target]
    if lines is None:
        if target.is_file():
            # Too large or unreadable: the file is real, it just cannot be audited.
            item.reason, item.fabricated = FILE_UNREADABLE, False
        else:
            item.reason = FILE_MISSING
        return item
    if not 1 <= line <= len(lines):
        item.reason = LINE_MISSING
        return item
    wanted = content_words(description, code=True)
    if not wanted.words and not wanted.numbers:
        # "x" says nothing to check; the file and line exist, so the reference itself is real.
        item.status, item.reason, item.fabricated = VERIFIED, NOTHING_TO_CHECK, False
        return item
    candidates = []
    for number in range(max(1, line - LINE_RADIUS), min(len(lines), line + LINE_RADIUS) + 1):
        share = wanted.support(content_words(lines[number - 1], code=True))
        candidates.append((share, -abs(number - line), number))
    share, _, best = max(candidates)
    cited_share = next(candidate[0] for candidate in candidates if candidate[2] == line)
    if cited_share >= SUPPORT_THRESHOLD:
        item.status, item.reason, item.fabricated, item.score = VERIFIED, LINE_MATCHES, False, cited_share
    elif share >= SUPPORT_THRESHOLD:
        item.status, item.reason, item.fabricated, item.score = CORRECTED, FOUND_NEARBY, False, share
        item.corrected_to = {"path": path, "line": best}
    else:
        item.reason, item.score = NOTHING_NEARBY, share
    return item


def _inside(source_tree: Path, path: str) -> Path | None:
    """`path` resolved inside `source_tree`, or None when it is absolute, climbs out or links out of it.

    The checks on the text come first, so a path such as `../../etc/passwd` is refused without touching the
    file system; `resolve` then catches a symlink inside the tree that points out of it.
    """
    if "\\" in path or path.startswith("~"):
        return None
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts:
        return None
    root = source_tree.resolve()
    target = (root / pure).resolve()
    if not target.is_relative_to(root):
        return None
    return target


def _read_lines(path: Path) -> list[str] | None:
    """The lines of a file inside the source tree, or None when it is too large or cannot be read."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None


CHECK: Final = Critic(NAME, SEVERITY, audit_citations)
