"""Block references and embeds resolved across a graph (`pages_resolved`): each page's stored text holds the
words of the blocks it shows, marked as borrowed from the page they come from (decision 0006).
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from garden.formats.logseq.blocks import (
    _MEDIA_MACROS,
    _PAGE_REF,
    _WORDS_MACROS,
    BLOCK_REF,
    MACRO,
    Block,
)
from garden.formats.note import Borrowed, ParsedArticle, WrittenLink

DUPLICATE_TITLE = (
    "duplicate title: {paths} claim one title, '{title}' (Logseq keeps one page per title); only {kept} was "
    "imported"
)
BLOCK_NOT_SHOWN = "(a block not in the garden)"  # a reference to a block of a private, missing or failed page
MACRO_NOT_SHOWN = "({name} shown in Logseq only)"


@dataclass
class _Edits:
    """Replacements in a text, with where each old offset lands in the new text."""

    pieces: list[str] = field(default_factory=list)
    moves: list[tuple[int, int]] = field(default_factory=list)  # (old offset after an edit, shift)

    def moved(self, offset: int) -> int:
        shift = 0
        for after, delta in self.moves:
            if offset >= after:
                shift = delta
        return offset + shift


def _substituted(
    text: str, pattern: re.Pattern[str], replace_with: Callable[[re.Match[str]], str]
) -> tuple[str, _Edits]:
    edits = _Edits()
    cursor = shift = 0
    for match in pattern.finditer(text):
        new = replace_with(match)
        edits.pieces += [text[cursor : match.start()], new]
        shift += len(new) - (match.end() - match.start())
        edits.moves.append((match.end(), shift))
        cursor = match.end()
    edits.pieces.append(text[cursor:])
    return "".join(edits.pieces), edits


def _sentences(words: Iterable[str]) -> str:
    return " ".join(w if w.rstrip(_END)[-1:] in ".!?:;" else f"{w}." for w in words if w)


# While a page is resolved, each block's words stand between these marks, with the place of the page they come
# from (`_marked`), so that every stretch of borrowed words is found again in the finished text
# (`_borrowed_found`): private-use characters, which no note's own text holds.
_FROM, _WORDS, _END = "\ue000", "\ue001", "\ue002"
_MARK = re.compile(f"{_FROM}([^{_WORDS}]*){_WORDS}|{_END}")


def _marked(page: ParsedArticle, words: str) -> str:
    return f"{_FROM}{page.relative_path or page.path}{_WORDS}{words}{_END}"


@dataclass(frozen=True)
class _Unmarked:
    """A resolved text without its marks, the stretches they held, and where each marked offset now stands."""

    text: str
    borrowed: tuple[Borrowed, ...]
    mark_ends: list[int]  # where each mark ends in the marked text
    marks_gone: list[int]  # the characters of marks up to and with each

    def moved(self, offset: int) -> int:
        before = bisect_right(self.mark_ends, offset)
        return offset - (self.marks_gone[before - 1] if before else 0)


def _borrowed_found(marked: str) -> _Unmarked:
    pieces: list[str] = []
    borrowed: list[Borrowed] = []
    opened: list[tuple[int, str]] = []  # (where, whose) of each stretch still open, the innermost last
    found = _Unmarked("", (), [], [])
    cursor = length = 0
    for match in _MARK.finditer(marked):
        pieces.append(marked[cursor : match.start()])
        length += match.start() - cursor
        if match.group(1) is not None:
            opened.append((length, match.group(1)))
        elif opened:
            start, place = opened.pop()
            borrowed.append((start, length, place))
        found.mark_ends.append(match.end())
        gone = found.marks_gone[-1] if found.marks_gone else 0
        found.marks_gone.append(gone + match.end() - match.start())
        cursor = match.end()
    pieces.append(marked[cursor:])
    return replace(found, text="".join(pieces), borrowed=tuple(sorted(borrowed)))


@dataclass(frozen=True)
class ResolvedGraph:
    notes: list[ParsedArticle]
    duplicates: list[tuple[str, str]]  # (path, message): files whose title another file already has


def pages_resolved(
    notes: Sequence[ParsedArticle],
    *,
    blocks: Mapping[str, dict[str, Block]],
    body_words: Callable[[str], str],
    links_of: Callable[[str], tuple[WrittenLink, ...]],
) -> ResolvedGraph:
    """The graph's pages as Logseq shows them: one page per title (the first by path; the others are
    reported once, with every path), and every block reference and macro resolved. A page whose text now
    holds words of other pages gets a content hash of what it shows, so an edit of a referenced block
    reaches it on the next sync, and links to their pages. `blocks` are the pages' blocks others may reference,
    by the place of their page (`page_blocks`); `body_words` cleans a block's text as a page body
    is cleaned; `links_of` reads the links of a text."""
    by_title: dict[str, list[ParsedArticle]] = defaultdict(list)
    for note in notes:
        by_title[note.title.strip().lower()].append(note)
    kept: list[ParsedArticle] = []
    duplicates: list[tuple[str, str]] = []
    for group in by_title.values():
        group = sorted(group, key=lambda note: note.relative_path or note.path)
        kept.append(group[0])
        if len(group) > 1:
            paths = " and ".join(note.path for note in group)
            message = DUPLICATE_TITLE.format(paths=paths, title=group[0].title, kept=group[0].path)
            duplicates.append((group[1].path, message))  # told once, whatever the number of files
    order = {id(note): i for i, note in enumerate(notes)}
    kept.sort(key=lambda note: order[id(note)])
    table: dict[str, tuple[Block, ParsedArticle]] = {
        uuid: (block, note) for note in kept for uuid, block in blocks.get(note.relative_path, {}).items()
    }

    def words(uuid: str, *, whole: bool) -> str:
        found = table.get(uuid.lower())
        if found is None:
            return BLOCK_NOT_SHOWN
        block, page = found
        lines = [block.text, *block.subtree] if whole else [block.text]
        # One level: a block quoting a block (each line's end read with the words it quotes).
        lines = [BLOCK_REF.sub(lambda m: _inner(m.group(1)), line) for line in lines]
        text = _sentences(lines) if whole else lines[0]
        text = MACRO.sub(lambda m: _macro(m, lambda _u: BLOCK_NOT_SHOWN), text)
        return _marked(page, f"{body_words(text).strip()} ([[{page.title}]])")

    def _inner(uuid: str) -> str:
        found = table.get(uuid.lower())
        if found is None:
            return BLOCK_NOT_SHOWN
        return _marked(found[1], body_words(found[0].text).strip())

    resolved = []
    for note in kept:
        if "((" not in note.body and "{{" not in note.body:
            resolved.append(note)
            continue
        body, macros = _substituted(
            note.body, MACRO, lambda m: _macro(m, lambda uuid: words(uuid, whole=True))
        )
        body, refs = _substituted(body, BLOCK_REF, lambda m: words(m.group(1), whole=False))
        if body == note.body:
            resolved.append(note)
            continue
        found = _borrowed_found(body)
        anchors = {key: found.moved(refs.moved(macros.moved(at))) for key, at in note.anchors.items()}
        digest = hashlib.sha256(f"{note.content_hash}\n{found.text}".encode()).hexdigest()
        links = tuple(dict.fromkeys((*note.links, *links_of(found.text))))  # the referenced blocks' pages too
        resolved.append(
            replace(
                note,
                body=found.text,
                anchors=anchors,
                content_hash=digest,
                links=links,
                borrowed=found.borrowed,
            )
        )
    return ResolvedGraph(resolved, duplicates)


def _macro(match: re.Match[str], block: Callable[[str], str]) -> str:
    """A macro as words: `{{embed [[page]]}}` an embed, `{{embed ((id))}}` the block's words, `{{cloze
    words}}` its words, a video its address as a link, anything else a short trace of what it was."""
    name, argument = match.group(1).lower(), match.group(2).strip()
    if name == "embed":
        page = _PAGE_REF.fullmatch(argument)
        if page is not None:
            return f"![[{page.group(1).strip()}]]"
        ref = BLOCK_REF.fullmatch(argument)
        if ref is not None:
            return block(ref.group(1))
    if name in _WORDS_MACROS:
        return argument
    if name in _MEDIA_MACROS and argument:
        return f"[{name}]({argument})" if "://" in argument else f"({name}: {argument})"
    return MACRO_NOT_SHOWN.format(name=name)
