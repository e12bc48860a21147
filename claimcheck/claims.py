"""Split an answer into sentence-level claims with character spans and `[n]` citations.

Pure Python (no Django): the judge, the benchmarks and the web layer all share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from text.markup import MARKER, TRAILING, citation_numbers, strip_citations
from text.words import ABBREVIATIONS, word_set

__all__ = ["Sentence", "split_claims", "split_sentences"]


@dataclass(frozen=True)
class Sentence:
    """One sentence of an answer: `text == original[start:end]`; `is_claim` is False for meta/tone."""

    text: str
    start: int
    end: int
    is_claim: bool
    citations: tuple[int, ...]


# Words after which a period does not end a sentence (compared lower-cased, without the final period): the shared
# abbreviations and the claim splitter's extras (citations, titles, weekdays, streets). The passage splitter keeps a shorter
# list (garden/passages.py), so that stored passages do not move.
_ABBREVIATIONS = ABBREVIATIONS | word_set(
    """vol vols figs eq eqs ch sec art p pp para ed eds gov sen rep pres bros v u.n e.u u.s.a al mon tue wed thu fri
    sat sun ave blvd rd op cit ibid"""
)

# Abbreviations only before a year: circa, born, died, flourished ("c. 1876", "b. 1830").
_BEFORE_A_YEAR = frozenset({"c", "b", "d", "fl"})

_BULLET_RE = re.compile(r"^[ \t]*(?:[-*•‣◦+]|\d{1,3}[.)]|[a-z][.)](?=\s)|#{1,6})[ \t]+")
_CLOSERS = "\"'”’)]»"
_OPENERS = "\"'“‘([«"

# Tone and meta-statements: true of the answer, not claims about the world.
_META_PATTERNS = [
    r"^(?:great|good|excellent|interesting|nice|fantastic|what a (?:great|good))\b.*\bquestion\b",
    r"^(?:thanks?|thank you)\b",
    r"^(?:sure|certainly|of course|absolutely|okay|ok|yes|no problem|happy to help|glad to help|hi|hello|hey)"
    r"\s*[!.,:]*$",
    r"^(?:i|we) (?:hope|trust) (?:this|that|it) (?:helps|was helpful|answers)",
    r"\blet me know\b",
    r"^(?:please )?feel free\b",
    r"^(?:here(?:'s| is| are)|below (?:is|are))\b.*:$",
    r"^(?:according to|based on|from) (?:the|these|my|our) (?:sources?|articles?|garden|material)\b.*:$",
    r"^(?:in (?:summary|short|conclusion)|to (?:summarize|sum up))\s*[:,]?$",
    r"\b(?:the|these|my) (?:sources?|articles?|garden) (?:do(?:es)? not|don't|doesn't) "
    r"(?:say|mention|cover|address|discuss|contain|include)\b",
    r"^i (?:don't|do not) have (?:any )?(?:material|information)\b",
    r"^(?:hope (?:this|that|it) helps|happy (?:reading|gardening)|good luck|enjoy)\b",
    r"^(?:let's|let us) (?:take a look|look|dive|see)\b",
    # Conversational acknowledgements ("Yeah!", "That's true.", "I see.") carry no checkable content.
    r"^(?:(?:yes|yeah|yep|yup|no|nope|nah|ok|okay|sure|right|true|indeed|wow|cool|nice|great|awesome|"
    r"interesting|lol|ha(?:ha)+|hm+|oh|ah|aw+|really|exactly|definitely|agreed|same|me too|i see|i know|"
    r"i agree|good (?:to know|point)|not sure|oh well|fair enough)[\s,.!]*)+$",
    r"^(?:(?:yes|yeah|oh|wow|well|ok|okay|haha|lol|true)[\s,.!]+)*(?:that|it|this)(?:'s| is| was| sounds| seems)(?: (?:so|very|really|pretty|quite))? "
    r"(?:true|right|interesting|cool|great|awesome|amazing|crazy|funny|nice|good|fun|wild|weird|sad|"
    r"a lot|neat|fascinating|incredible|impressive|surprising|strange)[\s,.!]*$",
    r"^i (?:believe|think|guess|suppose) (?:so|it (?:is|was)|that's right)[\s,.!]*$",
]
# A sentence made only of these words ("Yes, it is.", "I agree with you.", "It does.") states nothing.
_EMPTY_WORDS = frozenset(
    re.findall(
        r"\S+",
        """yes yeah yep yup no nope nah ok okay sure well oh ah wow lol haha i it he she they that this we you
    there is was does did do has have had can could will would are were am be not n't nt too also so indeed
    really right true agree agreed with think believe guess suppose know see mean me same here again though
    exactly definitely absolutely totally of course thanks thank please hmm um uh s 's""",
    )
)
# Questions that actually assert something ("Did you know that the NFL has no rule against...?").
_ASSERTING_QUESTION_RE = re.compile(
    r"^(?:(?:and|but|so|also|well),? )?(?:did|do) you know (?:that )?|^(?:have|had) you heard (?:that )?",
    re.IGNORECASE,
)
_META_RE = re.compile("|".join(f"(?:{p})" for p in _META_PATTERNS), re.IGNORECASE)
# A label for what follows ("Key facts:", on a line of its own) and a list of the sources used state nothing
# themselves. Unlike the meta-statements, they do not split a line: "Tom: Hi there." is a line of dialogue.
_LABEL_RE = re.compile(
    r"^[\w'’-]+(?: [\w'’-]+){0,2}:$|^(?:sources?|references?|citations?|further reading|see also)\s*:",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[A-Za-z0-9]")


def _previous_word(text: str, end: int) -> str:
    """The word (dots kept inside, e.g. `e.g`) ending just before position `end`."""
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in ".'&"):
        start -= 1
    return text[start:end].lstrip(".'")


def _is_boundary(text: str, dot: int, next_start: int, all_lower: bool) -> bool:
    """Whether the terminator at `dot` ends a sentence, given the next non-space character's index."""
    mark = text[dot]
    if next_start >= len(text):
        return True
    following = text[next_start]
    if mark in "!?":
        return following.isupper() or following.isdigit() or following in _OPENERS or all_lower
    word = _previous_word(text, dot)
    lowered = word.lower()
    if lowered in _ABBREVIATIONS and not (lowered == "etc" and following.isupper()):
        return False
    if lowered in _BEFORE_A_YEAR and following.isdigit():
        return False
    # Initials ("J. R. R. Tolkien") and one-letter list labels do not end sentences.
    if len(word) == 1 and word.isalpha() and word.isupper():
        return False
    # Dotted acronyms such as "U.S." or "Ph.D." read as abbreviations unless a new sentence clearly starts.
    if "." in word and not following.isupper():
        return False
    if following.isupper() or following.isdigit() or following in _OPENERS:
        return True
    # Wholly lower-case chat ("i saw it. it was good.") still has sentences.
    return all_lower and following.isalpha()


# How far ahead a quotation may close for the sentences inside it to stay with the one that quotes them.
_QUOTATION_REACH = 400


def _inside_quotation(text: str, start: int, position: int, end: int) -> bool:
    """Whether `position` is inside a double-quoted passage that opened after `start` and closes soon after.

    'He said "It opened in 1889. It closed in 1990."' is one claim: what he said, not two of the quote's own.
    """
    before, after = text[start:position], text[position : min(end, position + _QUOTATION_REACH)]
    if before.count('"') % 2 == 1 and '"' in after:
        return True
    return before.rfind("“") > before.rfind("”") and "”" in after


def _is_lead_in(text: str, start: int, colon: int) -> bool:
    """A meta lead-in ending at `colon` and followed by more text on the same line."""
    rest = text[colon + 1 : colon + 3]
    return rest[:1] == " " and rest[1:2].isupper() and bool(_META_RE.search(text[start : colon + 1].strip()))


def _sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentence spans inside `text[start:end]`, citations attached to the sentence they follow."""
    segment = text[start:end]
    all_lower = not any(ch.isupper() for ch in segment)
    spans: list[tuple[int, int]] = []
    sentence_start = start
    position = start
    while position < end:
        char = text[position]
        if char == ":" and _is_lead_in(text, sentence_start, position):
            # "Here is what the sources say: The tower ..." - the lead-in is a statement of its own.
            spans.append((sentence_start, position + 1))
            sentence_start = position + 1
            position += 1
            continue
        if char not in ".!?…":
            position += 1
            continue
        # Decimals and versions (3.5, £16.50, v1.2.3): a dot between digits is not an end.
        if (
            char == "."
            and 0 < position < end - 1
            and text[position - 1].isdigit()
            and text[position + 1].isdigit()
        ):
            position += 1
            continue
        terminator = position
        cursor = position + 1
        while cursor < end and text[cursor] in ".!?…":
            cursor += 1
        while cursor < end and text[cursor] in _CLOSERS:
            cursor += 1
        marker = TRAILING.match(text, cursor, end)
        if marker:
            cursor = marker.end()
            # "... 1889. [2]." keeps a stray final period with the marker.
            if cursor < end and text[cursor] == ".":
                cursor += 1
        next_start = cursor
        while next_start < end and text[next_start].isspace():
            next_start += 1
        if (next_start == cursor and next_start < end) or _inside_quotation(
            text, sentence_start, cursor, end
        ):
            position = cursor
            continue
        if _is_boundary(text, terminator, next_start, all_lower) or next_start >= end:
            spans.append((sentence_start, cursor))
            sentence_start = next_start
            position = next_start
        else:
            position = cursor
    if sentence_start < end:
        spans.append((sentence_start, end))
    return spans


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink the span to exclude surrounding whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _is_claim(sentence: str) -> bool:
    """Whether a sentence states something checkable (not tone, a question or a heading)."""
    plain = strip_citations(sentence).strip(" \t*_#>\"'“”")
    if len(_WORD_RE.findall(plain)) < 2:
        return False
    if plain.rstrip("!").endswith("?") and not _ASSERTING_QUESTION_RE.search(plain):
        return False
    words = re.findall(r"[a-z]+", plain.lower().replace("’", "'"))
    if all(word in _EMPTY_WORDS for word in words):
        return False
    return not (_META_RE.search(plain) or _LABEL_RE.search(plain))


def _is_heading(text: str, start: int) -> bool:
    """Whether the sentence at `start` is a Markdown heading ("## History"): a title, not a statement."""
    line_start = text.rfind("\n", 0, start) + 1
    return bool(re.fullmatch(r"[ \t]*#{1,6}[ \t]+", text[line_start:start]))


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of `text`: lines and list items first, then sentence ends, with
    bullet and heading marks trimmed (a claim is the statement alone; `garden.passages.sentence_spans` keeps
    the markup, as a passage must)."""
    spans: list[tuple[int, int]] = []
    line_start = 0
    for line in re.split(r"(\n)", text):
        if line == "\n":
            line_start += 1
            continue
        line_end = line_start + len(line)
        bullet = _BULLET_RE.match(line)
        body_start = line_start + (bullet.end() if bullet else 0)
        body_start, body_end = _trim(text, body_start, line_end)
        if body_start < body_end:
            for sentence_start, sentence_end in _sentence_spans(text, body_start, body_end):
                trimmed = _trim(text, sentence_start, sentence_end)
                if trimmed[0] < trimmed[1]:
                    spans.append(trimmed)
        line_start = line_end
    return _merge_citation_only(text, spans)


def _merge_citation_only(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Attach a span made only of citation markers (e.g. a marker on its own line) to the one before."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        piece = text[start:end]
        same_line = bool(merged) and "\n" not in text[merged[-1][1] : start]
        if same_line and not MARKER.sub("", piece).strip(" .,;"):
            merged[-1] = (merged[-1][0], end)
            continue
        merged.append((start, end))
    return merged


def split_claims(text: str) -> list[Sentence]:
    """Every sentence of `text` as a `Sentence` (meta-statements kept with `is_claim=False`)."""
    claims = []
    for start, end in split_sentences(text):
        sentence = text[start:end]
        claims.append(
            Sentence(
                text=sentence,
                start=start,
                end=end,
                is_claim=_is_claim(sentence) and not _is_heading(text, start),
                citations=citation_numbers(sentence),
            )
        )
    return claims
