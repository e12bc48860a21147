"""A note's language, named as PostgreSQL's full-text search names it (its text-search configuration).

The language a note names (front matter `lang:`, Logseq's `lang::`, Org's `#+LANGUAGE:`) wins; else the one its
words show, when they show one clearly; else the garden's (`GARDEN_LANGUAGE`). Its passages are stemmed, and its
stop words dropped, by that configuration, and a question is searched in each language the garden's passages
are in. Pure Python: the sync and the admin's edits call it; PostgreSQL does the stemming.
"""

from __future__ import annotations

import re
from collections import Counter

# PostgreSQL's configuration that stems nothing and drops no word: for a language it has no configuration for.
SIMPLE = "simple"

# ISO 639-1 codes to the configurations PostgreSQL 16 ships (`SELECT cfgname FROM pg_ts_config`).
CONFIGURATIONS = {
    "ar": "arabic",
    "hy": "armenian",
    "eu": "basque",
    "ca": "catalan",
    "da": "danish",
    "nl": "dutch",
    "en": "english",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hi": "hindi",
    "hu": "hungarian",
    "id": "indonesian",
    "ga": "irish",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "no": "norwegian",
    "nb": "norwegian",
    "nn": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}
KNOWN = frozenset(CONFIGURATIONS.values()) | {SIMPLE}

# The commonest words of the languages detection tells apart. A word two of them share ("de", "die") counts for
# both: the margin below (DOMINANCE) tells them apart.
_COMMON_WORDS = {
    "english": "the and of to that it was with be this by from at or have which an were not has its they their but",
    "german": "der die das und ist nicht ein eine den dem mit von zu auf für sich des auch im am es wird sind wurde "
    "bei oder nach aus wie werden seit dass noch nur über aber wenn hat zum zur ihn",
    "french": "de le la les et est des une un du que qui dans pour pas sur au avec ce il sont par plus ne se aux "
    "cette été elle",
    "spanish": "de el la los las y que es en del un una por con para se su al lo como más pero sus fue está son",
    "italian": "il la le e che di è un una per non del della con sono si gli nel alla dei anche più ma come delle",
    "dutch": "de het een en van is dat niet op te met voor zijn er aan ook als bij maar wordt naar werd dit die",
    "portuguese": "de o a os as e que do da dos das em um uma para não por no na se mais é foi ao pelo",
    "swedish": "och att det som en är av för med till den inte på har om ett var de kan eller från vid",
    "danish": "og at det er en af til som med den for ikke på har de et var fra kan eller om blev efter",
    "norwegian": "og i det er en som på til av for med har ikke den de et var om fra eller kan ble etter",
    "finnish": "ja on ei se että oli hän ovat tai kun mutta myös kuin jo vain sen joka tämä niin",
    "russian": "и в не на что с по это как из к для от он она так его же был или",
}
_MARKERS: dict[str, list[str]] = {}
for _language, _words in _COMMON_WORDS.items():
    for _word in set(_words.split()):
        if len(_word) > 1:  # "a", "o", "e", "y": as often a list's letter or a piece of a link as a word
            _MARKERS.setdefault(_word, []).append(_language)
# Fewer of a language's common words than this (a list, a table, a line or two) tell no language apart reliably.
MIN_MARKERS = 5
# A note's language must have this many times the common words of any other (which shares some of them): a
# quotation or a name in another language leaves the note's own.
DOMINANCE = 2
_WORD = re.compile(r"[^\W\d_]+")
# Addresses, whose pieces ("com", "en", "de") are no one's words: a run of non-space holding one of these.
_LINK_MARKS = ("://", "@", "www.")
# Enough of a note to tell its language: its words are counted in this much of it, however long it is.
DETECTION_CHARS = 20_000

# The words a question asks with that PostgreSQL's stop words keep ("warum", "combien"), by configuration: a
# passage that answers a question seldom holds them, and a full-text hit needs every word of the question.
# English's are stop words already.
QUESTION_WORDS = {
    "german": "wann warum weshalb wieso weswegen wer wen wem wessen wie wo woher wohin welche welcher welches "
    "welchen welchem was",
    "french": "quand pourquoi comment combien quel quelle quels quelles qui que quoi où lequel laquelle lesquels "
    "lesquelles",
    "spanish": "cuándo cuando por qué porqué cómo cuánto cuánta cuántos cuántas dónde quién quiénes cuál cuáles",
    "italian": "quando perché come quanto quanta quanti quante dove chi quale quali cosa",
    "dutch": "wanneer waarom hoe hoeveel waar wie welke welk wat",
    "portuguese": "quando porque porquê como quanto quanta quantos quantas onde quem qual quais",
    "swedish": "när varför hur var vem vilken vilket vilka vad",
    "danish": "hvornår hvorfor hvordan hvor hvem hvilken hvilket hvilke hvad",
    "norwegian": "når hvorfor hvordan hvor hvem hvilken hvilket hvilke hva",
}


def configuration(written: str) -> str:
    """The configuration of a language as written: an ISO 639-1 code ("de", "de-AT", "pt_BR"), or a
    configuration's own name ("German"); `simple` for one PostgreSQL has none for ("ja")."""
    name = written.strip().lower()
    if name in KNOWN:
        return name
    return CONFIGURATIONS.get(re.split(r"[-_]", name)[0], SIMPLE)


def detected(text: str) -> str | None:
    """The configuration of the language `text` is clearly written in, by its commonest words; None when its
    words do not show one (too few, or two languages near each other)."""
    kept = (
        part for part in text[:DETECTION_CHARS].lower().split() if not any(m in part for m in _LINK_MARKS)
    )
    words = _WORD.findall(" ".join(kept))
    found = Counter(language for word in words for language in _MARKERS.get(word, ()))
    ranked = found.most_common(2)
    if not ranked or ranked[0][1] < MIN_MARKERS:
        return None
    best, count = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0
    return best if count >= DOMINANCE * runner_up else None


def note_language(written: str, text: str, garden: str) -> str:
    """The configuration of a note's passages: the language it names (`written`, empty when none), else the one
    its `text` is clearly in, else the `garden`'s."""
    if written.strip():
        return configuration(written)
    return detected(text) or configuration(garden)
