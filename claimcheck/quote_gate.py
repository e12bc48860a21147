"""The quote gate: a judge's quote counts only if it is really in the source it names, and is about the claim.

`check_quote` looks for a quote in a source text: verbatim first (after normalising whitespace runs, curly
quotes, dashes, invisible formatting characters and Markdown link markup), then fuzzily with rapidfuzz, and
returns the span of the original source text that matched. `gate_vote` applies that to a judge's vote: a status
that needs support whose quote is not in the named source falls to unverified (judges can fabricate too, see
docs/architecture.md), and so does one whose quote, though in its source, is not about the claim: a juror
steered by a note can back anything with the quote "the". What "about" means follows what the status says of
the source. Verified, outdated and misattributed say a source states the claim (a current one, a superseded
one, another article than the one cited), so their quote must carry it (`carries_claim`). Inferred and
contradicted say a source speaks of the claim without stating it (a premise it follows from, or what the source
says instead), so their quote need only bear on it (`bears_on_claim`): hold two of its words, not its figures.
`quote_passed` tells from a gated vote's flags whether its quote stood, and so whether readers may see it.
Pure Python: no Django.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Final

from rapidfuzz import fuzz

from claimcheck.judges.local.figures import number_value
from claimcheck.judges.local.lexicon import STOPWORDS, split_words, stem
from claimcheck.judges.types import Ruling, Source
from claimcheck.terms import ClaimStatus, Flag
from text.markup import LINK, WIKILINK, strip_citations
from text.words import CARDINALS

__all__ = [
    "MIN_CLAIM_SHARE",
    "MIN_FUZZY_LENGTH",
    "MIN_WORDS_HELD",
    "REJECTED",
    "QuoteCheck",
    "bears_on_claim",
    "carries_claim",
    "check_quote",
    "gate_vote",
    "quote_passed",
]

# Below this many characters a fuzzy match is too likely to be a coincidence, so only a verbatim one counts.
MIN_FUZZY_LENGTH: Final = 12
# A supporting quote holds at least this share of the claim's content words: below a third it is about something
# else the source says; a quote that says the claim, even in other words, keeps more (make eval).
MIN_CLAIM_SHARE: Final = 1 / 3
# ... and at least two of them (all, for a claim of one): any one word ("1932", "bridge") is in many a sentence.
# An inferred or contradicted quote needs these two words too, and nothing more (`bears_on_claim`).
MIN_WORDS_HELD: Final = 2
# The statuses that say a source speaks of the claim without stating it: an inference's premise, or what a source
# says instead. Their quote may word the claim otherwise or give another figure, so it need only bear on it. Every
# other status that shows a quote (verified, outdated, misattributed) says a source states it: the quote carries it.
_UNSTATED: Final = frozenset({ClaimStatus.INFERRED, ClaimStatus.CONTRADICTED})
# The flags the gate gives a vote whose quote it did not let stand: editors see such a quote, readers never.
REJECTED: Final = frozenset({Flag.QUOTE_NOT_FOUND, Flag.QUOTE_MISSES_CLAIM})

_QUOTE_MARKS = "'\""
_CHAR_MAP: Final[Mapping[str, str]] = {
    **dict.fromkeys("‘’‚‛′‹›´", "'"),
    **dict.fromkeys("“”„‟″«»", '"'),
    **dict.fromkeys("‐‑‒–—―−﹘﹣－", "-"),
    "…": "...",
}
# Invisible characters, and Markdown emphasis that a judge quoting rendered text would leave out.
_DROPPED: Final = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff*`")
# Link markup, which a judge quoting the text as it reads leaves out: "[[slug|label]]" reads "label",
# "[[slug]]" reads "slug" (see `text.markup.WIKILINK`) and "[text](url)" reads "text" (`text.markup.LINK`).
_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[^\W_]+(?:'t)?")
_NEGATIONS: Final = frozenset(
    {"not", "no", "never", "none", "nor", "neither", "nothing", "nobody", "nowhere", "without", "cannot"}
)


@dataclass(frozen=True)
class QuoteCheck:
    """Where a quote was found in a source: `start`/`end` index the original text, `text` is that span."""

    found: bool
    exact: bool
    start: int | None
    end: int | None
    score: float
    text: str


_NOT_FOUND = QuoteCheck(found=False, exact=False, start=None, end=None, score=0.0, text="")


def check_quote(quote: str, source_text: str, *, threshold: float = 90.0) -> QuoteCheck:
    """Find `quote` in `source_text`: verbatim after normalisation, else fuzzily at >= `threshold` (0-100).

    An empty quote is never found, and one shorter than `MIN_FUZZY_LENGTH` characters only verbatim. A fuzzy
    match must also keep the quote's numbers and negations: a "typo" in a year or a dropped "not" is a
    different statement, not a misquote. A quote wrapped in quotation marks is also tried without them.
    """
    if not 0 < threshold <= 100:
        raise ValueError("threshold must be in (0, 100]")
    stripped = quote.strip()
    candidates = [stripped]
    unwrapped = _unwrap(stripped)
    if unwrapped != stripped:
        candidates.append(unwrapped)
    for candidate in candidates:
        found = _exact(candidate, source_text)
        if found is not None:
            return found
    best = _NOT_FOUND
    for candidate in candidates:
        check = _fuzzy(candidate, source_text, threshold)
        if check.found:
            return check
        if check.score > best.score:
            best = check
    return best


def gate_vote(vote: Ruling, sources: Mapping[int, Source], *, claim: str) -> Ruling:
    """Let a vote on `claim` stand only if its quote is in the source it names and is about the claim.

    Any status but `unverified` needs support: when the quote is not found in the named source, or the source
    does not exist, the vote becomes unverified with the `quote-not-found` flag, keeping its confidence and the
    quote as given (editors see what was invented); a source number that does not exist is dropped so nothing
    links to it. A vote whose quote is found but is not about the claim becomes unverified with the
    `quote-misses-claim` flag: an inferred or contradicted quote must bear on the claim (`bears_on_claim`), a
    verified, outdated or misattributed one carry it (`carries_claim`). A quote that is found is replaced by
    the exact span of the source it matched. An `unverified` vote keeps its status; an empty quote, or one
    found in its source, passes unchanged, and any other gets the `quote-not-found` flag, so that readers are
    not shown it either.
    """
    source = sources.get(vote.source_index) if vote.source_index is not None else None
    if vote.status == ClaimStatus.UNVERIFIED:
        if not vote.quote.strip() or (source is not None and check_quote(vote.quote, source.text).found):
            return vote
        return _flagged(vote, Flag.QUOTE_NOT_FOUND, source_index=source.index if source else None)
    if source is None:
        return _downgrade(vote, Flag.QUOTE_NOT_FOUND, source_index=None)
    check = check_quote(vote.quote, source.text)
    if not check.found:
        return _downgrade(vote, Flag.QUOTE_NOT_FOUND, source_index=vote.source_index)
    about_claim = bears_on_claim if vote.status in _UNSTATED else carries_claim
    if not about_claim(check.text, claim):
        return _downgrade(vote, Flag.QUOTE_MISSES_CLAIM, source_index=vote.source_index)
    if check.text == vote.quote:
        return vote
    return replace(vote, quote=check.text)


def quote_passed(flags: Iterable[str]) -> bool:
    """Whether the quote of a vote with these flags (after the gate) stood: one that did not is for editors only."""
    return REJECTED.isdisjoint(flags)


def carries_claim(quote: str, claim: str) -> bool:
    """Whether `quote` says enough of `claim` to support it.

    It must hold at least `MIN_WORDS_HELD` of the claim's content words (all of them, for a shorter claim); at
    least one of the claim's figures when it states any, else one of its names when it names any; and at least
    `MIN_CLAIM_SHARE` of its content words, unless it holds every figure and name the claim states ("Josiah
    Fenwick" for "The viaduct was designed by Josiah Fenwick"). Words are compared by their stems and figures by
    their values ("1,200" is "1200", "twenty-one" is "21"), as the local judge reads them.
    """
    words, figures, names = _claim_words(claim)
    if not words:
        return True  # a claim of function words only has nothing a quote could miss
    held = words & _quote_words(quote)
    if len(held) < min(MIN_WORDS_HELD, len(words)):
        return False
    if not held & (figures or names or words):
        return False
    return len(held) / len(words) >= MIN_CLAIM_SHARE or (figures | names) <= held


def bears_on_claim(quote: str, claim: str) -> bool:
    """Whether `quote` speaks of what `claim` is about, though it need not state it.

    It must hold at least `MIN_WORDS_HELD` of the claim's content words (all of them, for a shorter claim),
    compared as `carries_claim` compares them, but neither a share of them nor any figure or name: an inference
    words its premise otherwise ("opened in 1932" for "has stood for 90 years"), and a contradiction gives
    another figure or name. So where the claim states a figure (or a name) that the quote does not hold, a
    figure (or name) the claim does not have counts as one word held, once: it is what the source says in its
    place ("In 1932 the old bridge" bears on "The bridge opened in 1923"), while a lone "1932" or "bridge" does
    not bear on it, nor "the".
    """
    words, figures, names = _claim_words(claim)
    if not words:
        return True  # a claim of function words only has nothing a quote could miss
    held = words & _quote_words(quote)
    _, quote_figures, quote_names = _claim_words(quote)
    other_figure = bool(figures - held and quote_figures - words)
    other_name = bool(names - held and quote_names - words)
    return len(held) + (other_figure or other_name) >= min(MIN_WORDS_HELD, len(words))


def _keyed_words(text: str) -> list[tuple[str, str]]:
    """The words of `text`, each with the key it is compared by: a figure's value ("twenty-one" is one word,
    "21"), else its stem."""
    words = [word for word, _, _ in split_words(text)]
    keyed: list[tuple[str, str]] = []
    skip = False
    for word, after in zip(words, [*words[1:], ""], strict=True):
        if skip:
            skip = False
            continue
        tens, unit = CARDINALS.get(word.lower()), CARDINALS.get(after.lower())
        if tens is not None and tens >= 20 and tens % 10 == 0 and unit is not None and 0 < unit < 10:
            keyed.append((f"{word}-{after}", str(tens + unit)))
            skip = True
            continue
        keyed.append((word, number_value(word) or stem(word)))
    return keyed


@lru_cache(maxsize=512)
def _claim_words(claim: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The keys of the claim's content words, and of those its figures (written in digits) and its names
    (capitalised, past the first word, whose capital says nothing)."""
    words: set[str] = set()
    figures: set[str] = set()
    names: set[str] = set()
    for position, (word, key) in enumerate(_keyed_words(strip_citations(claim))):
        if word.lower() in STOPWORDS or (len(word) == 1 and not word.isdigit()):
            continue
        words.add(key)
        if word[0].isdigit():
            figures.add(key)
        elif position > 0 and word[0].isupper():
            names.add(key)
    return frozenset(words), frozenset(figures), frozenset(names)


def _quote_words(quote: str) -> frozenset[str]:
    return frozenset(key for _, key in _keyed_words(quote))


def _downgrade(vote: Ruling, flag: Flag, *, source_index: int | None) -> Ruling:
    return replace(_flagged(vote, flag, source_index=source_index), status=ClaimStatus.UNVERIFIED)


def _flagged(vote: Ruling, flag: Flag, *, source_index: int | None) -> Ruling:
    flags = vote.flags if flag in vote.flags else (*vote.flags, flag)
    return replace(vote, source_index=source_index, flags=flags)


def _unwrap(quote: str) -> str:
    if len(quote) > 2 and _CHAR_MAP.get(quote[0], quote[0]) in _QUOTE_MARKS:
        last = _CHAR_MAP.get(quote[-1], quote[-1])
        if last in _QUOTE_MARKS:
            return quote[1:-1].strip()
    return quote


@lru_cache(maxsize=512)
def _normalise(text: str, *, fold: bool) -> tuple[str, tuple[int, ...]]:
    """`text` normalised for matching, and for each of its characters the offset it came from in `text`."""
    chars: list[str] = []
    offsets: list[int] = []
    in_space = False
    markup = _link_markup(text)
    for index, char in enumerate(text):
        if char in _DROPPED or index in markup:
            continue
        if char.isspace():
            if not in_space:
                chars.append(" ")
                offsets.append(index)
            in_space = True
            continue
        in_space = False
        mapped = _CHAR_MAP.get(char, char)
        if fold:
            mapped = mapped.lower()
        chars.extend(mapped)
        offsets.extend([index] * len(mapped))
    return "".join(chars), tuple(offsets)


@lru_cache(maxsize=512)
def _link_markup(text: str) -> frozenset[int]:
    """The offsets of the characters of `text` that are link markup, not the words a reader sees."""
    dropped: set[int] = set()
    for match in WIKILINK.finditer(text):
        shown = match.span(WIKILINK.groupindex["label" if match["label"] else "target"])
        dropped.update(range(match.start(), shown[0]), range(shown[1], match.end()))
    for match in LINK.finditer(text):
        dropped.update(range(match.start(), match.start(1)), range(match.end(1), match.end()))
    return frozenset(dropped)


def _whole_links(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a span of `text` so that it does not cut a link's markup in half."""
    markup = _link_markup(text)
    while start > 0 and start - 1 in markup:
        start -= 1
    while end < len(text) and end in markup:
        end += 1
    return start, end


def _exact(quote: str, source_text: str) -> QuoteCheck | None:
    needle, _ = _normalise(quote, fold=False)
    if not needle.strip():
        return None
    haystack, offsets = _normalise(source_text, fold=False)
    at = haystack.find(needle)
    if at < 0:
        return None
    start, end = _whole_links(source_text, offsets[at], offsets[at + len(needle) - 1] + 1)
    return QuoteCheck(found=True, exact=True, start=start, end=end, score=100.0, text=source_text[start:end])


def _fuzzy(quote: str, source_text: str, threshold: float) -> QuoteCheck:
    needle, _ = _normalise(quote, fold=True)
    needle = needle.strip()
    if len(needle) < MIN_FUZZY_LENGTH:
        return _NOT_FOUND
    haystack, offsets = _normalise(source_text, fold=True)
    if not haystack:
        return _NOT_FOUND
    if len(needle) >= len(haystack):
        # A quote longer than the source cannot be inside it; it can at most be the whole source, misquoted.
        start, end = 0, len(haystack)
    else:
        # A looser cutoff here because `_refine` can only raise the score of the window partial_ratio finds.
        alignment = fuzz.partial_ratio_alignment(needle, haystack, score_cutoff=max(threshold - 10, 0))
        if alignment is None:
            return _NOT_FOUND
        start, end = _refine(needle, haystack, alignment.dest_start, alignment.dest_end)
    score = fuzz.ratio(needle, haystack[start:end])
    if score < threshold:
        return replace(_NOT_FOUND, score=score)
    if not _same_facts(needle, haystack[start:end]):
        return replace(_NOT_FOUND, score=score)
    original_start, original_end = offsets[start], offsets[end - 1] + 1
    span = source_text[original_start:original_end]
    # Trim whitespace the window may have picked up at its edges, keeping the offsets in step.
    lead = len(span) - len(span.lstrip())
    original_start += lead
    original_end = original_start + len(span.strip())
    original_start, original_end = _whole_links(source_text, original_start, original_end)
    return QuoteCheck(
        found=True,
        exact=False,
        start=original_start,
        end=original_end,
        score=score,
        text=source_text[original_start:original_end],
    )


def _refine(needle: str, haystack: str, start: int, end: int) -> tuple[int, int]:
    """Move the window's edges to fit the quote best.

    partial_ratio only tries windows as long as the quote, so a quote with a dropped or extra letter ends
    up one character short or long of the sentence it came from. Each edge is moved within a small radius
    to the position with the best ratio, preferring word boundaries and then the smaller move on ties.
    """
    radius = min(max(3, len(needle) // 20), 12)

    def key(s: int, e: int) -> tuple[float, int, int]:
        boundaries = _is_boundary(haystack, s) + _is_boundary(haystack, e)
        return fuzz.ratio(needle, haystack[s:e]), boundaries, -(abs(s - start) + abs(e - end))

    for _ in range(2):
        start = max(
            range(max(0, start - radius), min(end - 1, start + radius) + 1), key=lambda s: key(s, end)
        )
        end = max(
            range(max(start + 1, end - radius), min(len(haystack), end + radius) + 1),
            key=lambda e: key(start, e),
        )
    return start, end


def _is_boundary(text: str, index: int) -> int:
    before = text[index - 1] if index > 0 else " "
    after = text[index] if index < len(text) else " "
    return int(not (before.isalnum() and after.isalnum()))


def _same_facts(quote: str, span: str) -> bool:
    if _NUMBER.findall(quote) != _NUMBER.findall(span):
        return False
    return _negations(quote) == _negations(span)


def _negations(text: str) -> Counter[str]:
    return Counter(word for word in _WORD.findall(text) if word in _NEGATIONS or word.endswith("n't"))
