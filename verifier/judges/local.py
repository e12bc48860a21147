"""The local judge: offline claim verification against numbered sources.

Each claim is aligned to the source sentences (MiniLM sentence and token embeddings plus word overlap), then the
aligned passage is checked for numbers, years, dates, names, places, negation and novel content. A small
novel-word model scores the claim words the source lacks (a swapped name, term or polarity word is riskier
than a rephrased verb). A logistic model turns all features into the probability that the claim is supported;
both models, the thresholds and the contradiction rules are fitted by `python -m verifier.calibration.train`
and committed in `local_params.json`. Rules on top pick the status, the verbatim quote and the flags.
Pure Python, numpy and the shared MiniLM: no Django.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from garden.citations import strip_citations
from verifier.claims import Sentence, split_claims, split_sentences
from verifier.judges.types import Ruling, Source
from verifier.terms import CONTRADICTION_FLAGS, NOT_SUPPORTED, ClaimStatus, Flag

__all__ = [
    "ALWAYS_CONTRADICTING",
    "FEATURE_NAMES",
    "MISMATCH_FEATURES",
    "PARAMS_PATH",
    "WORD_REPRESENTATION_SIZE",
    "JudgedText",
    "claim_evidence",
    "contradiction_rule",
    "judge_claims",
    "judge_text",
    "novel_word_risk",
    "supported_probability",
]

PARAMS_PATH = Path(__file__).with_name("local_params.json")


@dataclass(frozen=True)
class JudgedText:
    """A whole text judged: its claims, one vote per checkable claim, and the item-level outcome."""

    claims: tuple[Sentence, ...]
    votes: tuple[Ruling, ...]
    probability: float  # that every claim is supported (the weakest claim's probability)
    supported: bool  # no vote is unverified, misattributed or contradicted, and there is at least one vote


# ---------------------------------------------------------------------------------------------- text analysis

_WORD_RE = re.compile(r"\d+(?:[.,:/]\d+)*(?:st|nd|rd|th|s)?%?|[A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z]+)?")


def _word_set(words: str) -> frozenset[str]:
    """A set from a whitespace-separated word list (keeps long vocabularies readable)."""
    return frozenset(words.split())


_STOPWORDS = _word_set(
    """a about above after again against all also am an and any are aren't as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself of off on once only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves let's
    let it's i'm you're he's she's that's there's what's who's we're they're i've you've we've they've i'd
    you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll s t d ll m re ve y o one's may might
    must shall us ok okay yes yeah oh well really like get got go going gone say says said thing things lot
    lots much many every per via among within upon onto"""
)
_NEGATIONS = _word_set(
    """not no never none nobody nothing neither nor without cannot can't don't doesn't didn't isn't aren't
    wasn't weren't won't wouldn't shouldn't couldn't hasn't haven't hadn't mustn't nowhere n't fail fails
    failed unable lack lacks lacked"""
)
_NEGATION_PREFIXES = ("un", "in", "im", "ir", "il", "dis", "non", "mis")
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")  # fmt: skip
_MONTHS = frozenset(_MONTH_NAMES) | _word_set("jan feb mar apr jun jul aug sep sept oct nov dec")
_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13",
    "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18",
    "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60",
    "seventy": "70", "eighty": "80", "ninety": "90", "hundred": "100", "thousand": "1000",
    "million": "1000000", "billion": "1000000000", "first": "1", "second": "2", "third": "3",
    "fourth": "4", "fifth": "5", "sixth": "6", "seventh": "7", "eighth": "8", "ninth": "9", "tenth": "10",
    "once": "1", "twice": "2", "half": "0.5", "dozen": "12", "single": "1", "double": "2", "triple": "3",
}  # fmt: skip
_VAGUE_NUMBER_WORDS = frozenset({"hundred", "thousand", "million", "billion", "half", "dozen", "single", "double",
                                  "triple"})  # fmt: skip
_PLACE_PREPOSITIONS = frozenset({"in", "at", "from", "near", "to", "into", "across", "outside", "inside"})


def _stem(word: str) -> str:
    """A crude, fast English stem (lower-cased) so that inflections match."""
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    for suffix, replacement in (
        ("ies", "y"), ("ied", "y"), ("sses", "ss"), ("ing", ""), ("edly", ""), ("ed", ""), ("ly", ""),
        ("es", ""), ("s", ""),
    ):  # fmt: skip
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + replacement
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word.rstrip("e") if len(word) > 4 else word


def _number_value(token: str) -> str | None:
    """The normalised value of a numeric token ("1,200" -> "1200", "3.50" -> "3.5", "two" -> "2")."""
    lowered = token.lower()
    if lowered in _NUMBER_WORDS:
        return _NUMBER_WORDS[lowered]
    if not token[0].isdigit():
        return None
    core = re.sub(r"(?:st|nd|rd|th|s)$", "", lowered).rstrip("%")
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", core):
        core = core.replace(",", "")
    if re.fullmatch(r"\d+\.\d+", core):
        core = core.rstrip("0").rstrip(".")
    return core


_TENS = {
    word: int(value) for word, value in _NUMBER_WORDS.items() if word.endswith("ty")
}  # twenty ... ninety
_UNITS = {
    word: int(_NUMBER_WORDS[word]) for word in _word_set("one two three four five six seven eight nine")
}
# Units of length and mass, in metres and kilograms: "1.2 km" is "1,200 m".
_UNIT_SCALES: dict[str, tuple[str, Decimal]] = {
    **dict.fromkeys(
        ("mm", "millimetre", "millimetres", "millimeter", "millimeters"), ("m", Decimal("0.001"))
    ),
    **dict.fromkeys(("cm", "centimetre", "centimetres", "centimeter", "centimeters"), ("m", Decimal("0.01"))),
    **dict.fromkeys(("m", "metre", "metres", "meter", "meters"), ("m", Decimal(1))),
    **dict.fromkeys(("km", "kilometre", "kilometres", "kilometer", "kilometers"), ("m", Decimal(1000))),
    **dict.fromkeys(("g", "gram", "grams", "gramme", "grammes"), ("kg", Decimal("0.001"))),
    **dict.fromkeys(
        ("kg", "kilogram", "kilograms", "kilogramme", "kilogrammes", "kilo", "kilos"), ("kg", Decimal(1))
    ),
    **dict.fromkeys(("tonne", "tonnes"), ("kg", Decimal(1000))),
}


def _plain_number(value: Decimal) -> str:
    """A number as `_number_value` writes it: no exponent, no trailing zeros ("1200", "1.2")."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _slash_date(value: str) -> tuple[tuple[str, str, str], ...]:
    """The (day, month name, year) readings of "14/08/1876": day first, or month first, as written."""
    parts = value.split("/")
    if len(parts) != 3 or not all(part.isdigit() for part in parts) or len(parts[2]) != 4:
        return ()
    return tuple(
        (str(int(day)), _MONTH_NAMES[int(month) - 1], parts[2])
        for day, month in ((parts[0], parts[1]), (parts[1], parts[0]))
        if 1 <= int(month) <= 12 and 1 <= int(day) <= 31
    )


def _range_end_year(claim: _Text, i: int, value: str) -> str | None:
    """The year meant by the end of a range of years written without its century ("75" in "1873-75")."""
    previous = _number_value(claim.words[i - 1]) if i else None
    if not (re.fullmatch(r"\d\d", value) and previous and _is_year(previous)):
        return None
    dashed = re.search(rf"\b{previous}\s*[-\u2013]\s*{value}\b", claim.text)
    return previous[:2] + value if dashed else None


def _other_writings(claim: _Text, i: int, value: str) -> set[str]:
    """Other values the figure at `claim.words[i]` may have in a source that writes it another way."""
    words = claim.words
    lowered = words[i].lower()
    previous = words[i - 1].lower() if i else ""
    following = words[i + 1].lower() if i + 1 < len(words) else ""
    found: set[str] = set()
    if year := _range_end_year(claim, i, value):
        found.add(year)
    # "twenty-four" or "twenty four" is 24.
    if lowered in _TENS and following in _UNITS:
        found.add(str(_TENS[lowered] + _UNITS[following]))
    if lowered in _UNITS and previous in _TENS:
        found.add(str(_TENS[previous] + _UNITS[lowered]))
    # "4:30pm" is 16:30, "10am" is 10:00.
    clock = re.fullmatch(r"(\d{1,2})(?::(\d\d))?", value)
    if clock and following in {"am", "pm"} and 1 <= int(clock[1]) <= 12:
        hour = int(clock[1]) % 12 + (12 if following == "pm" else 0)
        minute = clock[2] or "00"
        found |= {f"{hour}:{minute}", f"{hour:02d}:{minute}"} | ({str(hour)} if minute == "00" else set())
    # "1.2 km" is 1,200 m (and 1,200,000 mm).
    if following in _UNIT_SCALES and re.fullmatch(r"\d+(?:\.\d+)?", value):
        dimension, scale = _UNIT_SCALES[following]
        found |= {
            _plain_number(Decimal(value) * scale / other)
            for other_dimension, other in set(_UNIT_SCALES.values())
            if other_dimension == dimension
        }
    found.discard(value)
    return found


_APPROXIMATELY = frozenset(
    {"about", "around", "roughly", "approximately", "approx", "nearly", "almost", "circa", "c"}
)
_NEGATED_MENTION = (("not",), ("nor",), ("rather", "than"), ("instead", "of"))


def _near(value: str, numbers: frozenset[str]) -> bool:
    """Whether a rounded figure is close to one of `numbers`: within 10%, or 3 years of a year."""
    if not re.fullmatch(r"\d+(?:\.\d+)?", value):
        return False
    figure = float(value)
    for number in numbers:
        if not re.fullmatch(r"\d+(?:\.\d+)?", number):
            continue
        years = _is_year(value), _is_year(number)
        gap = abs(figure - float(number))
        if (all(years) and gap <= 3) or (not any(years) and gap <= 0.1 * max(figure, float(number))):
            return True
    return False


def _ruled_out(words: Sequence[str], i: int) -> bool:
    """Whether the word at `i` follows "not", "nor", "rather than" or "instead of"."""
    before = tuple(word.lower() for word in words[max(0, i - 2) : i])
    return any(before[-len(phrase) :] == phrase for phrase in _NEGATED_MENTION)


def _written_otherwise(claim: _Text, i: int, value: str, source: _Prepared) -> bool:
    """Whether the figure at `claim.words[i]` is one the source has, written another way or rounded."""
    if _other_writings(claim, i, value) & source.numbers:
        return True
    if i and claim.words[i - 1].lower() in _APPROXIMATELY and _near(value, source.numbers):
        return True  # "roughly 15 km" for 14.5 km is a rounding, not another figure
    return any(
        {day, year} <= source.numbers and {month, month[:3]} & source.lower_words
        for day, month, year in _slash_date(value)
    )


def _is_year(value: str) -> bool:
    """Whether a normalised number reads as a year."""
    return value.isdigit() and len(value) == 4 and 1000 <= int(value) <= 2100


@dataclass(frozen=True)
class _Text:
    """A piece of text analysed once: words, stems, numbers, names and embeddings."""

    text: str
    words: tuple[str, ...]
    stems: tuple[str, ...]
    content: tuple[int, ...]  # indices of content words (not stopwords, not punctuation)
    vector: npt.NDArray[np.float32]  # unit sentence embedding (384,)
    word_vectors: npt.NDArray[np.float32]  # unit contextual embeddings of `words` (n, 384)


def _split_words(text: str) -> list[tuple[str, int, int]]:
    """Words and numbers of `text` with their character spans."""
    return [(m.group(0), m.start(), m.end()) for m in _WORD_RE.finditer(text)]


_encode_lock = threading.Lock()


@lru_cache(maxsize=1)
def _encoder() -> tuple[Any, Any]:
    """The MiniLM tokenizer and transformer behind `garden.embeddings` (loaded once).

    Where the CPU has native bfloat16 the judge runs its own bfloat16 copy: about 3x faster on one thread,
    with embeddings within 1e-4 cosine of float32 (the shared model itself is left untouched).
    """
    import torch

    from garden.embeddings import model

    sentence_model = model()
    transformer = sentence_model[0].auto_model
    try:
        native_bf16 = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        native_bf16 = False
    if native_bf16:
        transformer = copy.deepcopy(transformer).to(torch.bfloat16).eval()  # type: ignore[union-attr]
    return sentence_model.tokenizer, transformer


def _ascii_digits(text: str) -> str:
    """`text` with the digits of other scripts (fullwidth, Arabic-Indic, ...) as ASCII ones, so "１９９０" is
    1990. One character stays one character, so spans into `text` still hold."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)


def _encode(texts: Sequence[str]) -> list[_Text]:
    """Analyse texts: one transformer pass gives the sentence embedding and the per-word embeddings."""
    import torch

    texts = [_ascii_digits(text) for text in texts]
    tokenizer, transformer = _encoder()
    results: list[_Text | None] = [None] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    batch_size = 32
    for batch_start in range(0, len(order), batch_size):
        batch = order[batch_start : batch_start + batch_size]
        batch_texts = [texts[i] for i in batch]
        encoded = tokenizer(
            batch_texts,
            padding=True,
            truncation=True,
            max_length=128,
            return_offsets_mapping=True,
            return_tensors="pt",
        )
        offsets = encoded.pop("offset_mapping").numpy()
        with _encode_lock, torch.inference_mode():
            hidden = transformer(**encoded).last_hidden_state.float().numpy()
        mask = encoded["attention_mask"].numpy().astype(np.float32)
        pooled = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-9)
        for row, index in enumerate(batch):
            results[index] = _analyse(texts[index], pooled[row], hidden[row], offsets[row], mask[row])
    return [r for r in results if r is not None]


def _analyse(
    text: str,
    vector: npt.NDArray[np.float32],
    hidden: npt.NDArray[np.float32],
    offsets: npt.NDArray[np.int64],
    mask: npt.NDArray[np.float32],
) -> _Text:
    """Map word-piece embeddings onto the regex words of `text` (mean of the pieces inside each word)."""
    words = _split_words(text)
    piece_starts = offsets[:, 0]
    piece_ends = offsets[:, 1]
    valid = (mask > 0) & (piece_ends > piece_starts)
    word_vectors = np.zeros((len(words), hidden.shape[1]), dtype=np.float32)
    for i, (_, start, end) in enumerate(words):
        inside = valid & (piece_starts < end) & (piece_ends > start)
        if inside.any():
            word_vectors[i] = hidden[inside].mean(0)
        else:
            word_vectors[i] = vector  # truncated away: fall back to the sentence embedding
    word_vectors /= np.maximum(np.linalg.norm(word_vectors, axis=1, keepdims=True), 1e-9)
    surface = tuple(w for w, _, _ in words)
    stems = tuple(_stem(w) for w in surface)
    content = tuple(
        i for i, w in enumerate(surface) if w.lower() not in _STOPWORDS and (len(w) > 1 or w.isdigit())
    )
    return _Text(text, surface, stems, content, vector.astype(np.float32), word_vectors)


# ------------------------------------------------------------------------------------------- prepared sources

_MAX_PIECE_WORDS = 60


@dataclass(frozen=True)
class _Prepared:
    """A source split into sentence pieces (verbatim spans) with their analyses and source-wide sets."""

    text: str
    spans: tuple[tuple[int, int], ...]
    pieces: tuple[_Text, ...]
    vectors: npt.NDArray[np.float32]  # (n_pieces, 384)
    window_vectors: npt.NDArray[np.float32]  # unit mean of each piece with the next
    stems: frozenset[str]
    lower_words: frozenset[str]
    numbers: frozenset[str]


def _piece_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans of a source, long sentences cut at commas (or words) into pieces of ~60 words."""
    spans: list[tuple[int, int]] = []
    for start, end in split_sentences(text):
        words = list(re.finditer(r"\S+", text[start:end]))
        if len(words) <= _MAX_PIECE_WORDS:
            spans.append((start, end))
            continue
        piece_start = 0
        count = 0
        for i, word in enumerate(words):
            count += 1
            at_comma = word.group(0).endswith((",", ";", ":"))
            if (
                (count >= _MAX_PIECE_WORDS // 2 and at_comma)
                or count >= _MAX_PIECE_WORDS
                or i == len(words) - 1
            ):
                spans.append((start + words[piece_start].start(), start + word.end()))
                piece_start = i + 1
                count = 0
    return spans or [(0, len(text))]


_prepared_cache: OrderedDict[str, _Prepared] = OrderedDict()
_prepared_lock = threading.Lock()
_PREPARED_CACHE_SIZE = 256


def _prepare_sources(texts: Sequence[str]) -> list[_Prepared]:
    """Prepared sources, reusing recent ones (articles are judged against many answers)."""
    with _prepared_lock:
        missing = [t for t in dict.fromkeys(texts) if t not in _prepared_cache]
    if missing:
        all_spans = [_piece_spans(t) if t.strip() else [] for t in missing]
        flat = [t[s:e] for t, spans in zip(missing, all_spans, strict=True) for s, e in spans]
        analysed = _encode(flat)
        position = 0
        for text, spans in zip(missing, all_spans, strict=True):
            pieces = tuple(analysed[position : position + len(spans)])
            position += len(spans)
            prepared = _build_prepared(text, tuple(spans), pieces)
            with _prepared_lock:
                _prepared_cache[text] = prepared
                while len(_prepared_cache) > _PREPARED_CACHE_SIZE:
                    _prepared_cache.popitem(last=False)
    with _prepared_lock:
        found = []
        for t in texts:
            _prepared_cache.move_to_end(t)
            found.append(_prepared_cache[t])
        return found


def _build_prepared(text: str, spans: tuple[tuple[int, int], ...], pieces: tuple[_Text, ...]) -> _Prepared:
    """Stack the pieces' embeddings and gather the source-wide word, stem and number sets."""
    vectors = np.stack([p.vector for p in pieces]) if pieces else np.zeros((0, 384), dtype=np.float32)
    windows = vectors.copy()
    if len(vectors) > 1:
        windows[:-1] = vectors[:-1] + vectors[1:]
        windows /= np.maximum(np.linalg.norm(windows, axis=1, keepdims=True), 1e-9)
    stems = frozenset(s for p in pieces for s in p.stems)
    lower = frozenset(w.lower() for p in pieces for w in p.words)
    numbers = frozenset(v for p in pieces for w in p.words if (v := _number_value(w)) is not None)
    return _Prepared(text, spans, pieces, vectors, windows, stems, lower, numbers)


# ------------------------------------------------------------------------------------------------- features

FEATURE_NAMES = (
    "cos_best",
    "cos_window",
    "coverage_top",
    "coverage_source",
    "novel_content",
    "novel_numbers",
    "novel_names",
    "negation_mismatch",
    "antonym",
    "token_min",
    "token_mean",
    "token_low_share",
    "context_min",
    "novel_soft",
    "log_length",
    "novel_word_risk",
    "aligned_word_risk",
)
_ALIGNED_RISK = FEATURE_NAMES.index("aligned_word_risk")
# Size of one novel-word representation: its contextual embedding, best-match similarity, capitalisation.
WORD_REPRESENTATION_SIZE = 384 + 2

_TOP_SENTENCES = 3
ALIGNED_COSINE = 0.6
ALIGNED_COVERAGE = 0.6
# Below these a passage is about something else, and its mismatches are not worth naming as flags.
_RELATED_COSINE = 0.4
_RELATED_COVERAGE = 0.4
# Features that, on a well-aligned passage, can mean the source says otherwise.
MISMATCH_FEATURES = ("novel_numbers", "novel_names", "negation_mismatch", "antonym")
# A number, year or date the aligned source does not have always blocks support: readers act on figures.
ALWAYS_CONTRADICTING = ("novel_numbers",)
_TOKEN_SENTENCES = 5


@dataclass(frozen=True)
class _Alignment:
    """A claim against one source: the features, the best piece and the mismatches found."""

    features: npt.NDArray[np.float64]
    best_piece: int
    flags: tuple[str, ...]
    cos_best: float
    coverage_top: float
    novel_words: npt.NDArray[np.float32]  # (k, WORD_REPRESENTATION_SIZE): the claim words not in the source


def _negated(words: Sequence[str]) -> bool:
    """Whether the words carry an odd number of negation cues (so the statement is negative)."""
    return (
        sum(1 for w in words if w.lower().replace("’", "'") in _NEGATIONS or w.lower().endswith("n't")) % 2
        == 1
    )


def _antonym_pairs(claim_stems: Sequence[str], other: frozenset[str]) -> int:
    """Sentence words that are a prefix-negated form of a source word, or the reverse (correct/incorrect)."""
    count = 0
    for stem in claim_stems:
        if stem in other or len(stem) < 5:
            continue
        for prefix in _NEGATION_PREFIXES:
            if (stem.startswith(prefix) and stem[len(prefix) :] in other) or (prefix + stem) in other:
                count += 1
                break
    return count


def _align(claim: _Text, source: _Prepared) -> _Alignment:
    """Features of one claim against one source, and the flags its aligned passage raises."""
    n_features = len(FEATURE_NAMES)
    content_stems = [claim.stems[i] for i in claim.content]
    if not source.pieces:
        features = np.zeros(n_features)
        features[FEATURE_NAMES.index("novel_content")] = len(content_stems)
        features[FEATURE_NAMES.index("log_length")] = np.log1p(len(content_stems))
        return _Alignment(
            features,
            -1,
            (Flag.NOT_IN_SOURCES,),
            0.0,
            0.0,
            np.zeros((0, WORD_REPRESENTATION_SIZE), np.float32),
        )

    sims = source.vectors @ claim.vector
    window_sims = source.window_vectors @ claim.vector
    unique_stems = set(content_stems)
    if unique_stems:
        overlap = np.array(
            [len(unique_stems.intersection(p.stems)) / len(unique_stems) for p in source.pieces]
        )
    else:
        overlap = np.zeros(len(source.pieces))
    ranking = np.argsort(-(sims + 0.5 * overlap))
    top = ranking[:_TOP_SENTENCES]
    best = int(top[0])
    top_stems = set().union(*(source.pieces[i].stems for i in top))
    # A claim without a single content word ("He did.") has nothing a source could cover.
    coverage_top = len(unique_stems & top_stems) / len(unique_stems) if unique_stems else 0.0
    coverage_source = len(unique_stems & source.stems) / len(unique_stems) if unique_stems else 0.0
    novel = [s for s in unique_stems if s not in source.stems]

    # Numbers and names are checked against the whole source, negation against the best passage.
    best_piece = source.pieces[best]
    flags: list[str] = []
    novel_numbers = 0
    for i, word in enumerate(claim.words):
        value = _number_value(word)
        if value is None or value in source.numbers:
            continue
        if not word[0].isdigit() and (value in {"1", "2"} or word.lower() in _VAGUE_NUMBER_WORDS):
            continue  # "one", "second", "half", "a million" are too often not figures at all
        if _written_otherwise(claim, i, value, source):
            continue
        dates = _slash_date(value)
        value = _range_end_year(claim, i, value) or value
        novel_numbers += 1
        previous = claim.words[i - 1].lower() if i else ""
        following = claim.words[i + 1].lower() if i + 1 < len(claim.words) else ""
        if dates or previous in _MONTHS or following in _MONTHS:
            flags.append(Flag.WRONG_DATE)
        elif _is_year(value):
            flags.append(Flag.WRONG_YEAR)
        else:
            flags.append(Flag.WRONG_NUMBER)
    novel_names = 0
    for i, word in enumerate(claim.words):
        if i == 0 or not word[0].isupper() or word.lower() in _STOPWORDS or word.lower() in _MONTHS:
            continue
        if word.lower() in source.lower_words or claim.stems[i] in source.stems:
            continue
        if _ruled_out(claim.words, i):
            continue  # "in Millbridge, not Ashcombe" names a place only to say it is not the one
        novel_names += 1
        previous = claim.words[i - 1].lower()
        flags.append(Flag.WRONG_PLACE if previous in _PLACE_PREPOSITIONS else Flag.WRONG_NAME)
    negation_mismatch = float(_negated(claim.words) != _negated(best_piece.words))
    if negation_mismatch:
        flags.append(Flag.NEGATION)
    antonyms = _antonym_pairs(novel, source.stems)
    if antonyms:
        flags.append(Flag.ANTONYM)

    # Token alignment: each content word's best contextual match among the top passages' words.
    token_pieces = ranking[:_TOKEN_SENTENCES]
    target_vectors = np.concatenate([source.pieces[i].word_vectors for i in token_pieces])
    target_stems = [s for i in token_pieces for s in source.pieces[i].stems]
    if claim.content and len(target_vectors):
        claim_vectors = claim.word_vectors[list(claim.content)]
        similarity = claim_vectors @ target_vectors.T
        best_match = similarity.max(1)
        token_min = float(best_match.min())
        token_mean = float(best_match.mean())
        token_low = float((best_match < 0.55).mean())
        # A word present in the passage but used in another context (swapped roles) shows as a weak
        # contextual match even among its exact occurrences.
        stem_array = np.array(target_stems)
        context_scores = []
        soft_novel = 0
        novel_rows = []
        for row, index in enumerate(claim.content):
            same = stem_array == claim.stems[index]
            if same.any():
                context_scores.append(float(similarity[row, same].max()))
            elif claim.stems[index] not in source.stems:
                soft_novel += int(best_match[row] < 0.7)
                word = claim.words[index]
                capitalised = float(index > 0 and word[0].isupper())
                novel_rows.append(np.concatenate([claim_vectors[row], [best_match[row], capitalised]]))
        context_min = min(context_scores) if context_scores else 0.5
        novel_words = np.array(novel_rows, dtype=np.float32).reshape(-1, WORD_REPRESENTATION_SIZE)
    else:
        token_min = token_mean = 1.0
        token_low = 0.0
        context_min = 1.0
        soft_novel = 0
        novel_words = np.zeros((0, WORD_REPRESENTATION_SIZE), dtype=np.float32)

    features = np.array(
        [
            float(sims[best]) if len(sims) else 0.0,
            float(window_sims.max()),
            coverage_top,
            coverage_source,
            float(len(novel)),
            float(novel_numbers),
            float(novel_names),
            negation_mismatch,
            float(antonyms),
            token_min,
            token_mean,
            token_low,
            context_min,
            float(soft_novel),
            float(np.log1p(len(content_stems))),
            risk := novel_word_risk(novel_words),
            # An edit hides in a claim that otherwise matches its passage well (swapped name, number, word).
            risk * coverage_top,
        ]
    )
    if novel and coverage_source < 0.75:
        flags.append(Flag.NOVEL_CONTENT)
    return _Alignment(
        features, best, tuple(dict.fromkeys(flags)), float(sims.max()), coverage_top, novel_words
    )


def claim_evidence(
    claims: Sequence[str], source: str
) -> list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float32]]]:
    """For calibration: per claim, its features against `source` and its novel-word representations."""
    prepared = _prepare_sources([source])[0]
    analysed = _encode([strip_citations(c) for c in claims])
    alignments = [_align(claim, prepared) for claim in analysed]
    return [(a.features, a.novel_words) for a in alignments]


# ------------------------------------------------------------------------------------------------ the model


@dataclass(frozen=True)
class _Params:
    mean: npt.NDArray[np.float64]
    scale: npt.NDArray[np.float64]
    weights: npt.NDArray[np.float64]
    bias: float
    threshold: float  # probability at or above which a claim counts as supported
    verified_threshold: float  # and at or above which a directly quoted claim counts as verified
    contradiction_features: tuple[str, ...]  # mismatch features that make an aligned claim contradicted
    word_weights: npt.NDArray[np.float64]  # logistic model: is a novel word an unsupported edit?
    word_bias: float
    edit_threshold: float  # aligned novel-word risk at or above which a claim is not supported


# Hand-set fallback so the judge still works before calibration has been run (cosine and coverage dominate).
_DEFAULT_WEIGHTS = {"cos_best": 2.0, "coverage_top": 2.0, "novel_numbers": -1.5, "novel_names": -1.0,
                    "negation_mismatch": -1.5, "token_min": 1.0, "antonym": -1.0}  # fmt: skip


@lru_cache(maxsize=1)
def _params() -> _Params:
    """The committed calibration (or the hand-set fallback when the file is missing)."""
    n = len(FEATURE_NAMES)
    if PARAMS_PATH.exists():
        data = json.loads(PARAMS_PATH.read_text())
        if tuple(data["feature_names"]) == FEATURE_NAMES:
            return _Params(
                np.array(data["mean"], dtype=np.float64),
                np.array(data["scale"], dtype=np.float64),
                np.array(data["weights"], dtype=np.float64),
                float(data["bias"]),
                float(data["threshold"]),
                float(data["verified_threshold"]),
                tuple(data["contradiction_features"]),
                np.array(data["word_weights"], dtype=np.float64),
                float(data["word_bias"]),
                float(data["edit_threshold"]),
            )
    weights = np.array([_DEFAULT_WEIGHTS.get(name, 0.0) for name in FEATURE_NAMES])
    mean = np.zeros(n)
    mean[FEATURE_NAMES.index("cos_best")] = 0.6
    mean[FEATURE_NAMES.index("coverage_top")] = 0.6
    mean[FEATURE_NAMES.index("token_min")] = 0.6
    word_weights = np.zeros(WORD_REPRESENTATION_SIZE)
    return _Params(
        mean, np.full(n, 0.25), weights * 0.25, 0.0, 0.5, 0.7, MISMATCH_FEATURES, word_weights, 0.0, 1.01
    )


def novel_word_risk(
    novel_words: npt.NDArray[np.floating[Any]],
    weights: npt.NDArray[np.float64] | None = None,
    bias: float = 0.0,
) -> float:
    """The highest probability, among a claim's words absent from the source, that the word is an edit.

    Entities, numbers and polarity words are much riskier than a rephrased verb; 0 when every word is there.
    """
    if not len(novel_words):
        return 0.0
    if weights is None:
        params = _params()
        weights, bias = params.word_weights, params.word_bias
    z = novel_words.astype(np.float64) @ weights + bias
    return float(1.0 / (1.0 + np.exp(-np.clip(z.max(), -30, 30))))


def supported_probability(features: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Calibrated probability that a claim is supported, for feature rows `(..., n_features)`."""
    params = _params()
    z = ((features - params.mean) / params.scale) @ params.weights + params.bias
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


# ------------------------------------------------------------------------------------------------ the judge


@dataclass(frozen=True)
class _Assessment:
    source_position: int
    probability: float
    alignment: _Alignment


def _quote(source: _Prepared, piece: int) -> str:
    start, end = source.spans[piece]
    return source.text[start:end]


def _vote(
    claim: Sentence, analysed: _Text, sources: Sequence[Source], prepared: Sequence[_Prepared]
) -> Ruling:
    """One claim's vote: best support, then misattribution, outdatedness and contradiction rules."""
    params = _params()
    if not sources:
        return Ruling(ClaimStatus.UNVERIFIED, "", None, 0.9, (Flag.NOT_IN_SOURCES,))
    assessments = []
    for position, source in enumerate(prepared):
        alignment = _align(analysed, source)
        probability = float(supported_probability(alignment.features))
        assessments.append(_Assessment(position, probability, alignment))

    supported = [
        a
        for a in assessments
        if a.probability >= params.threshold and not _contradicting(a) and not _edited(a)
    ]
    current = [a for a in supported if not sources[a.source_position].superseded]
    cited = [a for a in current if sources[a.source_position].index in claim.citations]
    if supported:
        if cited:
            chosen, status = max(cited, key=lambda a: a.probability), None
        elif current and claim.citations:
            chosen, status = max(current, key=lambda a: a.probability), ClaimStatus.MISATTRIBUTED
        elif current:
            chosen, status = max(current, key=lambda a: a.probability), None
        else:
            chosen, status = max(supported, key=lambda a: a.probability), ClaimStatus.OUTDATED
        extra: tuple[str, ...] = ()
        if status == ClaimStatus.MISATTRIBUTED:
            extra = (Flag.OTHER_SOURCE,)
        elif status == ClaimStatus.OUTDATED:
            extra = (Flag.SUPERSEDED,)
        if status is None:
            extra = tuple(f for f in chosen.alignment.flags if f in CONTRADICTION_FLAGS)
            direct = (
                chosen.probability >= params.verified_threshold
                and (chosen.alignment.coverage_top >= 0.8 or chosen.alignment.cos_best >= 0.85)
                and not any(flag in CONTRADICTION_FLAGS for flag in chosen.alignment.flags)
            )
            status = ClaimStatus.VERIFIED if direct else ClaimStatus.INFERRED
            if not claim.citations and len(sources) > 1:
                extra = (*extra, Flag.UNCITED)
        origin = sources[chosen.source_position]
        quote = _quote(prepared[chosen.source_position], chosen.alignment.best_piece)
        return Ruling(status, quote, origin.index, round(chosen.probability, 4), extra)

    # Not supported anywhere: contradicted when a well-aligned passage disagrees, else unverified.
    best = max(assessments, key=lambda a: (a.alignment.cos_best + a.alignment.coverage_top, a.probability))
    alignment = best.alignment
    origin = sources[best.source_position]
    quote = _quote(prepared[best.source_position], alignment.best_piece) if alignment.best_piece >= 0 else ""
    # A rule (not the probability) decides these two, so the confidence is at least even.
    confidence = round(1.0 - best.probability, 4)
    if _contradicting(best):
        return Ruling(ClaimStatus.CONTRADICTED, quote, origin.index, max(confidence, 0.5), alignment.flags)
    flags = list(alignment.flags)
    if _edited(best):
        confidence = max(confidence, 0.5)
        flags.append(Flag.NOVEL_CONTENT)
    if alignment.cos_best < _RELATED_COSINE and alignment.coverage_top < _RELATED_COVERAGE:
        # Without a passage on the same subject no source "says otherwise": only the novelty is worth naming.
        flags = [f for f in flags if f not in CONTRADICTION_FLAGS]
    if alignment.cos_best < 0.5:
        flags.append(Flag.LOW_SIMILARITY)
    if alignment.coverage_top < 0.5 or alignment.cos_best < 0.4:
        flags.append(Flag.NOT_IN_SOURCES)
    return Ruling(ClaimStatus.UNVERIFIED, quote, origin.index, confidence, tuple(dict.fromkeys(flags)))


def _edited(assessment: _Assessment) -> bool:
    """A well-matched claim with a word the source lacks that looks like an edit (a swapped name or term)."""
    return bool(assessment.alignment.features[_ALIGNED_RISK] >= _params().edit_threshold)


def _contradicting(assessment: _Assessment) -> bool:
    """A passage that matches the claim closely but differs in a number, name, place or polarity."""
    return bool(contradiction_rule(assessment.alignment.features[None, :])[0])


def contradiction_rule(
    features: npt.NDArray[np.float64], names: Sequence[str] | None = None
) -> npt.NDArray[np.bool_]:
    """Rows `(n, n_features)` whose claim is well aligned yet carries a mismatch that counts as disagreement.

    `names` are the optional mismatch features in force (the calibrated ones by default); numbers always count.
    """
    if names is None:
        names = _params().contradiction_features
    cos = features[:, FEATURE_NAMES.index("cos_best")]
    coverage = features[:, FEATURE_NAMES.index("coverage_top")]
    aligned = (cos >= ALIGNED_COSINE) | (coverage >= ALIGNED_COVERAGE)
    mismatch = np.zeros(len(features), dtype=bool)
    for name in {*ALWAYS_CONTRADICTING, *names}:
        mismatch |= features[:, FEATURE_NAMES.index(name)] > 0
    return aligned & mismatch


def judge_claims(claims: Sequence[Sentence], sources: Sequence[Source]) -> list[Ruling]:
    """One vote per claim with `is_claim=True`, in order."""
    checkable = [c for c in claims if c.is_claim]
    if not checkable:
        return []
    prepared = _prepare_sources([s.text for s in sources])
    analysed = _encode([strip_citations(c.text) for c in checkable])
    return [_vote(c, a, sources, prepared) for c, a in zip(checkable, analysed, strict=True)]


def judge_text(text: str, sources: Sequence[str]) -> JudgedText:
    """Split `text` and judge it against plain sources numbered [1], [2], ... (benchmarks and `check_text`)."""
    claims = tuple(split_claims(text))
    numbered = [Source(index=i + 1, text=s) for i, s in enumerate(sources)]
    votes = tuple(judge_claims(claims, numbered))
    probabilities = [v.confidence if v.status not in NOT_SUPPORTED else 1.0 - v.confidence for v in votes]
    probability = min(probabilities) if probabilities else 0.0
    supported = bool(votes) and all(v.status not in NOT_SUPPORTED for v in votes)
    return JudgedText(claims, votes, probability, supported)
