"""`[n]` citations: the text a citation ends must be supported by the cited passage.

The source must exist and its article must be in the garden. The cited text is the whole sentence, or, when
the sentence has several runs of citations, the words since the previous run. When the passage does not
support it, another numbered source or another place in the same article (`article_text`) that does
corrects the citation; when none does, it is dropped. Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from claimcheck.claims import split_sentences
from claimcheck.critics.base import CriticInput, SourcePassage, Words, citation_markers, content_words
from claimcheck.critics.citation_gate.items import (
    ARTICLE_MISSING,
    CORRECTED,
    DROPPED,
    FOUND_ELSEWHERE_IN_ARTICLE,
    FOUND_IN_OTHER_SOURCE,
    NO_SUCH_SOURCE,
    NOTHING_TO_CHECK,
    SUPPORT_THRESHOLD,
    SUPPORTED,
    SUPPORTED_JOINTLY,
    UNSUPPORTED,
    VERIFIED,
    Item,
)

# With several sources cited together, each must carry at least this share of the claim on its own.
JOINT_SHARE: Final = 0.25
EXCERPT_CHARS: Final = 200


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


def audit_numbered(critic_input: CriticInput) -> Iterator[Item]:
    """One item per number of every `[n]` marker in the answer, in the answer's order."""
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
) -> Item:
    item = Item(kind="citation", reference=f"[{number}]", start=start, end=end, status=DROPPED, reason="")
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
