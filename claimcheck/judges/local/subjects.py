"""A clause's subject, found without a parser: the noun phrase before its first verb, its head noun (the last
content word before a preposition, a number or the verb), the words that tell it apart from others of its kind
(modifiers and names) and whether it is a pronoun. Word lists, not a model: fast and explainable, and wrong in
ways one can read ("The mill grinds corn" has no verb it knows, so that claim's subject is left unchecked)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from claimcheck.judges.local.figures import number_value
from claimcheck.judges.local.lexicon import MONTHS, STOPWORDS, stem
from text.words import word_set

PRONOUNS: Final = word_set(
    """i you he she it we they this that these those there here one someone somebody everyone everybody anyone
    nobody nothing everything something who which what both each all some many most few several others"""
)
# The speaker and the one spoken to: in a dialogue they are the one whose line it is.
PERSONAL: Final = word_set("i we you i'm we're you're i've we've you've i'd we'd you'd i'll we'll you'll")
# A demonstrative before a noun is a determiner ("this station"), before a verb a pronoun ("this is").
_DEMONSTRATIVES: Final = word_set("this that these those")
DEFINITE: Final = word_set("the this that these those its their his her our my your")
DETERMINERS: Final = DEFINITE | word_set("a an each every both all some any no another other such whose")
AUXILIARIES: Final = word_set(
    """is are was were be been being am has have had do does did will would can could may might must shall
    should 's 're 've 'd 'll"""
)
PREPOSITIONS: Final = word_set(
    """of in on at near from with by for to along under over behind beside besides between across through
    inside outside around beyond into onto upon within without among about after before during since until
    against towards toward via per like unlike despite according than"""
)
# Words that open a clause before its subject: conjunctions, discourse words, answers.
LEADERS: Final = word_set(
    """and but or nor so yet while whereas although though because instead then also however moreover still
    thus therefore today now yes yeah well oh indeed actually besides meanwhile otherwise hence nevertheless
    nonetheless furthermore additionally finally firstly secondly later when if once as even only just
    since unless whether where whilst sure okay ok"""
)
# A head noun phrase stops at a quantifier or a number: "the tender engine every 45 days".
_PHRASE_STOPS: Final = word_set("every each per all some no")
# Common verbs, as stems, whose forms end a subject phrase; a noun use follows a determiner ("the nest").
_VERB_STEMS: Final = frozenset(
    stem(word)
    for word in word_set(
        """accept add agree allow appear arrive ask attend avoid believe belong bloom book bring build
    buy call carry change check choose claim close come complain confirm connect consist contain continue cost
    cover create cross cut decide deliver describe design develop die discuss drink drive eat end enjoy explain
    fall feed feel fill find finish flow flower follow forget get give go grow hate have hear help hold hope
    host include inform intend introduce invite join keep know learn leave let like link live look love make
    manage mark measure meet mention move name need nest offer open order own paint pay plan play prefer
    prepare produce promise propose provide reach read receive recommend refuse remain remember remind rent
    replace reply report request require return reveal run say see seem sell send serve share show sing sit
    speak spend stand start stay stop stretch suggest support take talk teach tell thank think travel try
    turn understand use visit wait want warn wash watch wear weigh win wish wonder work worry write"""
    )
)
_IRREGULAR_PAST: Final = word_set(
    """found made built won began became took gave went came ran saw wrote led held left lost met paid said
    sold stood told thought brought bought caught taught fought sought grew knew drew flew threw rose fell
    chose spoke broke drove rode wore bore tore swore hung struck sang rang sank stole froze forgot got kept
    slept swept felt dealt meant sent spent lent bent shot fed bred fled sat beat bit hid slid dug spun stuck
    swung shone laid lit heard overheard understood"""
)
_OBJECT_PRONOUNS: Final = word_set("me him her us them it that what how why whether")
# Subjects that stand for the source itself ("The article discusses ..."): nothing in it to check them against.
META_SUBJECTS: Final = frozenset(
    stem(word)
    for word in word_set(
        """document article text passage source podcast episode paper study author speaker host video
    conversation dialogue discussion summary lesson story show interview transcript chapter report post blog
    talk lecture narrator writer chat"""
    )
)
# Past this many words, a phrase without a verb is not a subject the judge can trust.
MAX_SUBJECT_WORDS: Final = 8


@dataclass(frozen=True)
class Subject:
    """A subject noun phrase as stems: its head, the words before the head and the proper names in it."""

    head: str = ""
    modifiers: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    pronoun: bool = False
    definite: bool = False  # "the station": may point back to a subject named before
    head_is_name: bool = False
    verb: bool = False  # a verb ended the phrase (else it is a bare phrase: a heading, a gapped clause)
    personal: bool = False  # "I", "we", "you"

    @property
    def words(self) -> frozenset[str]:
        """Every stem that names this subject."""
        return self.modifiers | self.names | ({self.head} if self.head else frozenset())

    @property
    def key(self) -> frozenset[str]:
        """The stems a passage must hold to be about this subject: its names and its head."""
        return self.names | ({self.head} if self.head else frozenset())

    @property
    def anaphoric(self) -> bool:
        """A pronoun, or "the" with a bare head ("the station"): it points back to a subject named before."""
        return self.pronoun or (self.definite and not self.modifiers and not self.names)


def name_positions(words: Sequence[str], lowercase_written: frozenset[str]) -> frozenset[int]:
    """Positions of proper names: capitalised words that are not function words. The first word of a sentence
    counts only when the text never writes it in lower case ("Millbridge station", not "Hedges are cut")."""
    found = set()
    for i, word in enumerate(words):
        lowered = word.lower()
        if not word[0].isupper() or lowered in STOPWORDS or lowered in LEADERS or lowered in DETERMINERS:
            continue
        if lowered in MONTHS or lowered in PRONOUNS:
            continue
        if i == 0 and lowered in lowercase_written:
            continue
        found.add(i)
    return frozenset(found)


def _is_number(word: str) -> bool:
    return word[0].isdigit() or (number_value(word) is not None and word.lower() not in {"one", "first"})


def _verbish(words: Sequence[str], stems: Sequence[str], j: int, start: int, names: frozenset[int]) -> bool:
    """Whether the word at `j` (past the phrase's first word) reads as the verb that ends a subject."""
    word = words[j]
    lowered = word.lower().replace("’", "'")
    if lowered in AUXILIARIES or lowered.endswith("n't") or lowered in {"not", "never"}:
        return True
    if j in names or not word.islower():
        return False
    after_determiner = words[j - 1].lower() in DETERMINERS
    content_before = any(words[k].lower() not in STOPWORDS | DETERMINERS for k in range(start, j))
    if lowered in _IRREGULAR_PAST or (
        stems[j] in _VERB_STEMS and not after_determiner and not lowered.endswith("ing")
    ):
        return True
    if not content_before or lowered in STOPWORDS:
        return False
    if len(lowered) > 4 and lowered.endswith(("ed", "ly")):
        return True
    if not lowered.endswith("s") or lowered.endswith(("ss", "us", "is")):
        return False
    # A word in -s is a verb after a name ("Ann invites"), or before what only an object or a complement starts
    # with ("demonstrates the", "suggests emailing"); else a plural noun ("the tank engines are").
    following = words[j + 1] if j + 1 < len(words) else ""
    opens_object = (
        following.lower() in DETERMINERS | PREPOSITIONS | _OBJECT_PRONOUNS
        or following.lower().endswith("ing")
        or (bool(following) and (following[0].isupper() or _is_number(following)))
    )
    # "The old mill grinds oats": after a singular noun and before a noun, a word in -s is the verb.
    noun_follows = (
        following.islower() and _content_word(following) and stem(following) not in _VERB_STEMS
        and not words[j - 1].lower().endswith("s")
    )  # fmt: skip
    return j - 1 in names or opens_object or noun_follows


def _content_word(word: str) -> bool:
    lowered = word.lower()
    return lowered not in STOPWORDS and lowered not in DETERMINERS and lowered not in AUXILIARIES


def subject_of(
    words: Sequence[str], stems: Sequence[str], start: int, end: int, names: frozenset[int]
) -> Subject | None:
    """The subject of the clause `words[start:end]`; None when it has none the judge can read (it opens with
    a preposition or a number, or has no content word before its verb)."""
    i = start
    while i < end and words[i].lower() in LEADERS:
        i += 1
    if i >= end:
        return None
    first = words[i].lower()
    if first in PREPOSITIONS or _is_number(words[i]):
        return None
    if words[i].lower() in _VERB_STEMS | _IRREGULAR_PAST or stems[i] in _VERB_STEMS:
        return None  # an imperative ("buy some butter", "Try Marco Mengoni"): the subject is whoever is spoken to
    if words[i].islower() and (first in AUXILIARIES or _verbish(words, stems, i, i - 1, names)):
        return None  # a fragment that opens with its verb ("evokes the analogy of ...")
    following = words[i + 1] if i + 1 < end else ""
    if first in PERSONAL and (not following or _verbish(words, stems, i + 1, i + 1, names)):
        return Subject(pronoun=True, verb=True, personal=True)
    if first in PRONOUNS and (
        first not in _DEMONSTRATIVES | {"both", "all", "some", "many", "most", "few", "several", "each"}
        or not following
        or _verbish(words, stems, i + 1, i + 1, names)
        or following.lower() in PREPOSITIONS
    ):
        return Subject(pronoun=True, verb=True)
    j, head_end, verb = i, None, False
    while j < end and j - i <= MAX_SUBJECT_WORDS:
        if j > i and _verbish(words, stems, j, i, names):
            verb = True
            break
        lowered = words[j].lower()
        if head_end is None and j > i and (lowered in PREPOSITIONS | _PHRASE_STOPS or _is_number(words[j])):
            head_end = j
        j += 1
    if not verb and j < end:
        return None  # a long phrase with no verb found: no subject to trust
    content = [
        k
        for k in range(i, head_end if head_end is not None else j)
        if words[k].lower() not in STOPWORDS | DETERMINERS and not _is_number(words[k])
    ]
    if not content:
        return None
    head = content[-1]
    return Subject(
        head=stems[head],
        modifiers=frozenset(stems[k] for k in content[:-1]),
        names=frozenset(stems[k] for k in range(i, j) if k in names),
        definite=first in DEFINITE,
        head_is_name=head in names,
        verb=verb,
    )


def conflicts(
    topic: Subject, subject: Subject, claim_stems: frozenset[str], clause_stems: frozenset[str]
) -> bool:
    """Whether `topic`, a passage's subject, is another subject of the claim's kind: the same head told apart by
    other words ("the tank engines" against "the tender engine", "Millbridge station" against "Fellside
    station"), or another proper name ("Millbridge" against "Fellside"). A subject the claim itself names is a
    participant, not a rival ("Harper & Sons built the mill" for "The mill was built by Harper & Sons")."""
    if topic.pronoun or not topic.head or topic.words <= claim_stems:
        return False
    if topic.head == subject.head:
        theirs = (topic.modifiers | topic.names) - claim_stems
        ours = (subject.modifiers | subject.names) - clause_stems - topic.words
        return bool(theirs and ours)
    return topic.head_is_name and subject.head_is_name and not (topic.names & subject.names)
