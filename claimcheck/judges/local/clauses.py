"""Clauses: a sentence cut where one statement ends and the next begins (";", ":", a dash, a bracket, "but",
"whereas", ", because", ", and" before a new subject and verb, "rather than", "instead of"), each with its
polarity, its figures, its own subject and its topic (the subject it speaks of once pronouns and "the station"
are followed back to the subject named before them).

A negation is read in its clause: "never cut in spring, ...; they are cut in late September instead" denies the
spring and states September. Words after "rather than" or "instead of" are ruled out, as if negated."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from claimcheck.judges.local.encoding import Text
from claimcheck.judges.local.figures import is_written_year, number_value
from claimcheck.judges.local.lexicon import (
    MONTHS,
    STOPWORDS,
    VAGUE_NUMBER_WORDS,
    negated,
    split_words,
)
from claimcheck.judges.local.subjects import (
    AUXILIARIES,
    DETERMINERS,
    MAX_SUBJECT_WORDS,
    PREPOSITIONS,
    Subject,
    name_positions,
    subject_of,
)
from text.words import MONTH_NAMES, word_set

_BREAK_RE: Final = re.compile(r"[;:()\[\]—–]|\s-\s")
# Conjunctions that always open a new clause, and those that do so only after a comma ("for a while" is not one).
_ALWAYS_SPLIT: Final = frozenset({"but", "whereas", "although", "though"})
# ", not Y" denies Y alone; ", which ..." says something more of what came before.
_SPLIT_AFTER_COMMA: Final = frozenset(
    {"because", "while", "whilst", "yet", "so", "not", "nor", "which", "who", "whom", "whose", "where"}
)
# A clause these open is subordinate: a pronoun after it still points to the main clause's subject.
_SUBORDINATORS: Final = frozenset(
    {"because", "while", "whilst", "although", "though", "whereas", "since", "if", "when", "as", "unless"}
)
# After a comma these open a clause about the noun just before them, not about the main clause's subject.
_RELATIVES: Final = frozenset({"which", "who", "whom", "whose"})
_COORDINATORS: Final = frozenset({"and", "or"})
_RULING_OUT: Final = (("rather", "than"), ("instead", "of"))
# "not only X but also Y" says X: "not" before these words is no negation.
_NOT_A_NEGATION: Final = frozenset({"only", "just", "merely", "simply"})
_NEGATION_CUES: Final = word_set(
    "not no never none nobody nothing neither nor without cannot nowhere n't fail fails failed unable lack lacks lacked"
)


@dataclass(frozen=True)
class Figure:
    """A number, year or month in a clause, with its slot: the unit after it ("45 days"), else the content word
    before it ("opened in 1870"), or "month"."""

    value: str
    slot: str
    kind: str  # "number", "year" or "month"


@dataclass(frozen=True)
class Clause:
    """Words `start:end` of piece `piece` (-1 for a claim) read as one statement."""

    piece: int
    start: int
    end: int
    stems: frozenset[str]  # content stems, negation words left out
    negated: bool
    subject: Subject | None
    topic: Subject | None
    figures: tuple[Figure, ...]
    tokens: tuple[str, ...]  # the clause's words
    token_stems: tuple[str, ...]
    ruled_out: bool = False
    speaker: Subject | None = None  # in a dialogue, whose line it is ("Peggy: Maria is looking for ...")
    # Without a verb of its own, a clause says the one before it of something else ("dyed with madder rather
    # than indigo", "... every 30 days; the tender engine every 45 days"): that clause's words are understood.
    understood: frozenset[str] = frozenset()

    def covered(self) -> frozenset[str]:
        """The stems this clause states something about: its own, its topic's and its speaker's."""
        return (
            self.stems
            | (self.topic.words if self.topic else frozenset())
            | (self.speaker.words if self.speaker else frozenset())
        )


def lowercase_written(words: Sequence[str]) -> frozenset[str]:
    """The words a text writes in lower case (a capitalised word never written so is likely a name)."""
    return frozenset(w for w in words if w.islower())


def _content(word: str) -> bool:
    lowered = word.lower()
    return lowered not in STOPWORDS and lowered not in _NEGATION_CUES and (len(word) > 1 or word.isdigit())


def _gaps(text: str) -> list[str]:
    """The text between each word and the one before it (the first word's: what precedes it)."""
    spans = [(start, end) for _, start, end in split_words(text)]
    return [text[(spans[i - 1][1] if i else 0) : start] for i, (start, _) in enumerate(spans)]


def _bounds(
    gaps: Sequence[str], words: Sequence[str], stems: Sequence[str], names: frozenset[int]
) -> list[tuple[int, bool]]:
    """Where clauses start (word positions), each with whether its words are ruled out."""
    starts: list[tuple[int, bool]] = [(0, False)]
    for i in range(1, len(words)):
        gap = gaps[i]
        lowered = words[i].lower()
        pair = (words[i - 1].lower(), lowered)
        if pair in _RULING_OUT:
            if starts[-1][0] == i - 1:
                starts.pop()
            starts.append((i - 1, True))
            continue
        split = (
            bool(_BREAK_RE.search(gap))
            or lowered in _ALWAYS_SPLIT
            or ("," in gap and lowered in _SPLIT_AFTER_COMMA)
            or (lowered in _COORDINATORS and _new_statement(words, stems, i + 1, names))
        )
        if split and starts[-1][0] < i:
            starts.append((i, False))
    return starts


def _new_statement(words: Sequence[str], stems: Sequence[str], start: int, names: frozenset[int]) -> bool:
    """Whether the words from `start` open a statement of their own: a subject ended by a verb."""
    subject = subject_of(words, stems, start, len(words), names)
    return subject is not None and subject.verb and not subject.pronoun


def _negated(words: Sequence[str]) -> bool:
    kept = [w for i, w in enumerate(words) if not (w.lower() == "not" and i + 1 < len(words)
                                                   and words[i + 1].lower() in _NOT_A_NEGATION)]  # fmt: skip
    return negated(kept)


def _figures(words: Sequence[str], stems: Sequence[str], start: int, end: int) -> tuple[Figure, ...]:
    found = []
    for i in range(start, end):
        word = words[i]
        lowered = word.lower()
        if lowered in MONTH_NAMES or (lowered in MONTHS and word[0].isupper() and lowered != "may"):
            found.append(Figure(lowered[:3], "month", "month"))
            continue
        value = number_value(word)
        if value is None or (not word[0].isdigit() and lowered in VAGUE_NUMBER_WORDS - {"single"}):
            continue
        if not word[0].isdigit() and not (i + 1 < end and _content(words[i + 1])):
            continue  # "one of them", "the first": a number word counts only before its unit
        # The unit is the word after the figure ("45 days"), or after its scale ("40 million litres").
        after = i + 2 if i + 2 < end and words[i + 1].lower() in VAGUE_NUMBER_WORDS else i + 1
        unit = stems[after] if after < end and words[after].islower() and _content(words[after]) else ""
        if not unit:
            unit = next((stems[k] for k in range(i - 1, start - 1, -1) if _content(words[k])
                         and words[k].lower() not in PREPOSITIONS), "")  # fmt: skip
        found.append(Figure(value, unit, "year" if is_written_year(value) else "number"))
    return tuple(found)


def _noun_before(words: Sequence[str], stems: Sequence[str], end: int) -> Subject | None:
    """The noun phrase that ends just before `end` ("the upper meadow"), as a subject; None if a verb or a
    function word ends the words there."""
    k = end
    while k > 0 and _content(words[k - 1]) and words[k - 1].lower() not in DETERMINERS | AUXILIARIES:
        k -= 1
    if k == end or end - k > MAX_SUBJECT_WORDS or (k > 0 and words[k - 1].lower() not in DETERMINERS):
        return None  # no determiner before the words: they may end in a verb or an adverb, not a noun
    return Subject(head=stems[end - 1], modifiers=frozenset(stems[k : end - 1]), definite=True, verb=True)


def _clauses(
    text: Text, piece: int, lowercase: frozenset[str], previous: Subject | None
) -> tuple[list[Clause], Subject | None]:
    """The clauses of one piece; `previous` is the topic before it, returned updated."""
    words, stems = text.words, text.stems
    if not words:
        return [], previous
    names = name_positions(words, lowercase)
    gaps = _gaps(text.text)
    starts = _bounds(gaps, words, stems, names)
    clauses: list[Clause] = []
    topic: Subject | None
    speaker: Subject | None = None
    before: frozenset[str] = frozenset()
    for (start, ruled_out), (end, _) in zip(starts, [*starts[1:], (len(words), False)], strict=True):
        # "Cassie, have you had any?": a name before a comma is who is spoken to, not the subject.
        vocative = start + 1 < end and start in names and "," in gaps[start + 1]
        subject = None if ruled_out else subject_of(words, stems, start + vocative, end, names)
        stems_here = frozenset(stems[k] for k in range(start, end) if _content(words[k]))
        relative = start > 0 and words[start].lower() in _RELATIVES and "," in gaps[start]
        if relative:
            # "never graze the upper meadow, which is cut for hay": "which" is the meadow, the noun before it.
            topic = _noun_before(words, stems, start) or previous
        elif subject is not None and subject.personal:
            # "Anette: I love him": the speaker named before the colon; elsewhere, a narrator the judge cannot name.
            topic = previous if clauses and clauses[-1].subject and not clauses[-1].subject.verb else None
        elif subject is not None and (previous is None or not subject.anaphoric):
            topic = None if subject.pronoun else subject
        elif subject is not None and not subject.pronoun and previous is not None:
            # "The station" after "Millbridge station ...": that station, Millbridge's; after another kind of
            # thing (a heading "Facilities", "the platform"), a station the judge cannot name.
            same_kind = subject.head == previous.head
            topic = (
                Subject(subject.head, previous.modifiers, previous.names, definite=True)
                if same_kind
                else subject
            )
        else:
            topic = previous
        clauses.append(
            Clause(
                piece=piece,
                start=start,
                end=end,
                stems=stems_here,
                negated=_negated(words[start:end]) != ruled_out,
                subject=subject,
                topic=topic,
                figures=_figures(words, stems, start, end),
                tokens=tuple(words[start:end]),
                token_stems=tuple(stems[start:end]),
                ruled_out=ruled_out,
                speaker=speaker,
                understood=before if subject is None or not subject.verb else frozenset(),
            )
        )
        before = stems_here
        if (
            not clauses[:-1]
            and subject is not None
            and not subject.verb
            and end < len(words)
            and ":" in gaps[end]
        ):
            speaker = subject  # "Peggy: ...": the rest of the line is what Peggy says
        if words[start].lower() not in _SUBORDINATORS and not relative:
            # "..., because birds nest in them; they are cut ...": "they" are still the hedges.
            previous = topic if topic is not None else previous
    return clauses, previous


def source_clauses(pieces: Sequence[Text], lowercase: frozenset[str]) -> tuple[Clause, ...]:
    """Every clause of a source's pieces, in order, topics carried from one sentence to the next; `lowercase`
    holds the words the source writes in lower case (to tell names)."""
    found: list[Clause] = []
    topic: Subject | None = None
    for index, piece in enumerate(pieces):
        clauses, topic = _clauses(piece, index, lowercase, topic)
        found.extend(clauses)
    return tuple(found)


def claim_clauses(claim: Text, lowercase: frozenset[str]) -> tuple[Clause, ...]:
    """The clauses of a claim; `lowercase` holds the words its sources write in lower case (to tell names)."""
    return tuple(_clauses(claim, -1, lowercase | lowercase_written(claim.words), None)[0])


# A clause that reverses its source clause must restate at least this share of it: a rephrased reversal, not a
# different statement that happens to differ in polarity.
REVERSAL_COVERAGE: Final = 0.8
# A claim clause that shares less than this share of its words with the passage clause it matches restates it too
# loosely to overrule the sentences' polarities (make eval: BEGIN's chat turns beside a negated fact).
RESTATED_SHARE: Final = 0.5
# Fewer content words than this say too little for a reversal to be read with confidence.
MIN_REVERSAL_WORDS: Final = 2
# A negation governs the words it stands before: "never cut in spring", "is no longer sprayed". One further away
# in a long clause ("based his screenplay on a book, ... isn't necessarily to be believed") may deny something else.
NEGATION_REACH: Final = 3
# Ranking a passage's clauses, words of the claim's subject count this much extra: of two clauses that share
# as many words with the claim, the one about its subject is the one it restates.
SUBJECT_WEIGHT: Final = 0.5


@dataclass(frozen=True)
class NegationReading:
    """The claim's polarity against the clauses it restates: any clause differs (`mismatch`), or one restates a
    source clause almost word for word with the polarity reversed (`reversed`)."""

    mismatch: bool
    reversed: bool
    # The claim's negation words where it restates a denial of its passage in other words ("not" for "never").
    agreeing: frozenset[str] = frozenset()


def best_clause(claim_clause: Clause, candidates: Sequence[Clause]) -> tuple[Clause | None, int]:
    """The candidate the claim clause restates most (its topic's words count), and how many words they share."""
    subject = claim_clause.topic.words if claim_clause.topic else frozenset()
    best, best_score, best_shared = None, 0.0, 0
    for candidate in candidates:
        covered = candidate.covered() | candidate.understood
        shared = len(claim_clause.stems & covered)
        score = shared + SUBJECT_WEIGHT * len(subject & covered)
        if shared and score > best_score:
            best, best_score, best_shared = candidate, score, shared
    return best, best_shared


def _governs(clause: Clause, shared: frozenset[str]) -> bool:
    """Whether the clause's negation stands just before, or among, the words it shares with the other clause."""
    matched = [k for k, s in enumerate(clause.token_stems) if s in shared]
    if not matched:
        return False
    cues = [k for k, w in enumerate(clause.tokens) if _cue(clause.tokens, k)]
    if clause.ruled_out:
        cues.append(0)  # "rather than indigo": the ruling out opens the clause
    return any(matched[0] - NEGATION_REACH <= k <= matched[-1] for k in cues)


def _cue(words: Sequence[str], k: int) -> bool:
    lowered = words[k].lower().replace("’", "'")
    if lowered == "not" and k + 1 < len(words) and words[k + 1].lower() in _NOT_A_NEGATION:
        return False
    return lowered in _NEGATION_CUES or lowered.endswith("n't")


def read_negation(claim: Sequence[Clause], passage: Sequence[Clause], claim_words: Sequence[str],
                  passage_words: Sequence[str]) -> NegationReading:  # fmt: skip
    """Each claim clause against the passage clause it restates. The sentences' polarities still differ unless
    every claim clause restates most of a clause of its own polarity ("they are cut in late September" beside
    "never cut in spring"): a looser match may miss the negation that concerns it."""
    mismatch = reversed_ = False
    restated = bool(claim)
    agreeing: set[str] = set()
    for clause in claim:
        source, shared = best_clause(clause, passage)
        if source is None:
            # "I'm not sure, but ...": a denial of something the passage does not speak of is not in it.
            mismatch = mismatch or clause.negated
            restated = False
            continue
        close = shared >= RESTATED_SHARE * len(clause.stems)
        if clause.negated != source.negated or not close:
            restated = False
        if clause.negated and source.negated and close:
            agreeing.update(s for k, s in enumerate(clause.token_stems) if _cue(clause.tokens, k))
        elif clause.negated != source.negated:
            mismatch = True
            negative = clause if clause.negated else source
            if (
                len(clause.stems) >= MIN_REVERSAL_WORDS
                and shared >= REVERSAL_COVERAGE * len(clause.stems)
                and _governs(negative, clause.stems & (source.covered() | source.understood))
            ):
                reversed_ = True
    if not restated and _negated(claim_words) != _negated(passage_words):
        mismatch = True
    return NegationReading(mismatch, reversed_, frozenset(agreeing))
