"""Real passages for the bench: the docstrings, comments and prose documentation of the installed Python (its
standard library and site-packages) and the Debian packages' documentation (`/usr/share/doc`: change logs,
news, READMEs, licences), cut as the importer cuts notes, deduplicated, embedded once and cached under `.run/`.

The same install gives the same corpus: source files are read in an order fixed by their paths' hashes (so any
first n passages come from many packages), and a corpus of n passages is the first n of any larger one. The
cache is keyed by a hash of the source list (paths and sizes) and by the embedder; a run that needs more
passages than are cached extends the cache, one that needs fewer reads a prefix of it.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import inspect
import itertools
import json
import os
import re
import sysconfig
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from garden.passages import MAX_PASSAGE_CHARS, TARGET_PASSAGE_CHARS, passage_spans
from garden.services import embedding_input
from providers import embeddings

# Shorter than this is a one-line docstring ("Return the value."), not a passage a note would hold.
MIN_PASSAGE_CHARS = 200
# Share of a passage's tokens that must be plain words: below it, a passage is mostly code, signatures or tables.
MIN_WORD_SHARE = 0.75
# Larger source files are generated tables (unicode data, vendored bundles), not prose.
MAX_SOURCE_BYTES = 2_000_000
SUFFIXES = (".py", ".rst", ".md", ".txt")
# In /usr/share/doc any file is text unless it is code, markup or data by its suffix (Debian names change logs
# `changelog.Debian.gz`, licences `copyright`).
DOC_NOT_PROSE = frozenset(
    [
        *(".c", ".h", ".cc", ".cpp", ".py", ".pl", ".pm", ".sh", ".js", ".css", ".html", ".htm", ".xml"),
        *(".json", ".yaml", ".yml", ".svg", ".png", ".jpg", ".gif", ".pdf", ".bz2", ".xz", ".el", ".awk"),
        *(
            ".sed",
            ".tcl",
            ".patch",
            ".diff",
            ".conf",
            ".cfg",
            ".ini",
            ".mk",
            ".in",
            ".am",
            ".ac",
            ".m4",
            ".sql",
        ),
    ]
)
DOC_ROOT = Path("/usr/share/doc")
# Vectors are written after each such block, so an interrupted first build keeps what it embedded.
EMBED_BLOCK = 2_000
CACHE_FOLDER = "bench-corpus"
# Files read together, their passages taken in turns, at most FIRST_PASS_PASSAGES of each until every file has
# been read: one long change log does not fill a small corpus alone.
WINDOW = 64
FIRST_PASS_PASSAGES = 20
# Part of the cache key: a change to how passages are cut makes another corpus.
EXTRACTION_VERSION = 2

_WORD = re.compile(r"[(\"'“‘]?[A-Za-z][a-z'’-]*[)\"'”’,.;:!?]*")
_TOKEN = re.compile(r"\S+")
_UNDERLINE = re.compile(r"[-=~^*#+`]{3,}")
# A whole-line comment (not a shebang, encoding line or tool directive), its text.
_COMMENT = re.compile(r"\s*#(?![!])(?!\s*(?:-\*-|type:|noqa|pragma|fmt:|pylint:|mypy:))\s?(.*)")


@dataclass(frozen=True)
class Passage:
    title: str  # where it comes from: a module's dotted name or a documentation file's path
    text: str


@dataclass(frozen=True)
class Corpus:
    passages: list[Passage]
    vectors: npt.NDArray[np.float32]  # one unit row per passage, of embedding_input(title, text)
    sources_hash: str
    embedder: str
    built_seconds: float  # extracting and embedding what was not cached yet (0 when all was)
    folder: Path


def source_roots() -> dict[str, Path]:
    """The standard library and the installed packages of the running Python and the Debian packages'
    documentation, by a stable label."""
    paths = sysconfig.get_paths()
    return {"stdlib": Path(paths["stdlib"]), "site-packages": Path(paths["purelib"]), "doc": DOC_ROOT}


def _skipped(relative: str) -> bool:
    parts = relative.split("/")
    return any(part.startswith(".") or part == "__pycache__" or part.endswith(".dist-info") for part in parts)


def _candidate(label: str, path: Path) -> bool:
    if label != "doc":
        return path.name.endswith(SUFFIXES)
    return not path.is_symlink() and Path(path.name.removesuffix(".gz")).suffix.lower() not in DOC_NOT_PROSE


def source_files(roots: dict[str, Path] | None = None) -> list[tuple[str, Path]]:
    """Every candidate file as (label/relative path, path), in the corpus's reading order: sorted by a hash of
    the label, a shuffle that is the same on every run of one install."""
    found: list[tuple[str, Path]] = []
    for label, root in sorted((roots or source_roots()).items()):
        skip_top = {"site-packages", "dist-packages"} if label == "stdlib" else set()
        for folder, directories, names in os.walk(root):
            relative_folder = Path(folder).relative_to(root).as_posix()
            if relative_folder == ".":
                directories[:] = [d for d in directories if d not in skip_top]
            for name in names:
                if not _candidate(label, Path(folder) / name):
                    continue
                relative = name if relative_folder == "." else f"{relative_folder}/{name}"
                if not _skipped(relative):
                    found.append((f"{label}/{relative}", Path(folder) / name))
    return sorted(found, key=lambda item: hashlib.sha256(item[0].encode()).hexdigest())


def sources_hash(files: Sequence[tuple[str, Path]]) -> str:
    """A hash of the source list (labels and sizes): it changes when a package is installed or upgraded."""
    digest = hashlib.sha256(f"extraction {EXTRACTION_VERSION}\n".encode())
    for label, path in files:
        digest.update(f"{label}\t{path.stat().st_size}\n".encode())
    return digest.hexdigest()[:16]


def _module_name(label: str) -> str:
    relative = label.split("/", 1)[1].removesuffix(".py").removesuffix("/__init__")
    return relative.replace("/", ".")


def _docstrings(source: str) -> Iterator[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=True)
            if text:
                yield text


def _comment_blocks(source: str) -> Iterator[str]:
    """Runs of whole-line comments, their `#` taken off: the prose of a module beside its docstrings."""
    block: list[str] = []
    for line in source.splitlines():
        match = _COMMENT.match(line)
        if match:
            block.append(match.group(1))
            continue
        if block:
            yield "\n".join(block)
            block = []
    if block:
        yield "\n".join(block)


def _paragraphs(text: str) -> Iterator[str]:
    """The text's paragraphs, each on one line, without doctests, directives, underlines and tables."""
    for paragraph in re.split(r"\n[ \t]*\n", inspect.cleandoc(text)):
        lines = [line.strip() for line in paragraph.split("\n")]
        if any(line.startswith((">>>", ".. ", "|", "$ ", "In [")) for line in lines):
            continue
        kept = " ".join(line for line in lines if line and not _UNDERLINE.fullmatch(line))
        if kept:
            yield kept


def word_share(text: str) -> float:
    tokens = _TOKEN.findall(text)
    return sum(bool(_WORD.fullmatch(token)) for token in tokens) / max(len(tokens), 1)


def _passages_of(texts: Iterable[str]) -> Iterator[str]:
    """Passages cut from the texts' prose paragraphs as the importer cuts notes, one after another as in a note."""
    paragraphs = [p for text in texts for p in _paragraphs(text) if word_share(p) >= MIN_WORD_SHARE]
    prose = "\n\n".join(paragraphs)
    for span in passage_spans(prose):
        passage = span.of(prose)
        # Longer: one paragraph with no sentence end to cut at (a list of names, a flattened table).
        if MIN_PASSAGE_CHARS <= len(passage) <= MAX_PASSAGE_CHARS:
            yield passage


def _file_passages(label: str, path: Path) -> Iterator[Passage]:
    try:
        if path.stat().st_size > MAX_SOURCE_BYTES:
            return
        data = path.read_bytes()
        source = (gzip.decompress(data) if path.name.endswith(".gz") else data).decode("utf-8")
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError):
        return
    if label.endswith(".py") and not label.startswith("doc/"):
        title = _module_name(label)
        texts = [*_docstrings(source), *_comment_blocks(source)]
    else:
        title, texts = label.split("/", 1)[1].removesuffix(".gz"), [source]
    for passage in _passages_of(texts):
        yield Passage(title, passage)


def _dedup_key(text: str) -> str:
    return hashlib.sha1(" ".join(re.findall(r"\w+", text.lower())).encode()).hexdigest()


def passages_extract(files: Sequence[tuple[str, Path]], count: int) -> list[Passage]:
    """The first `count` distinct passages of `files` (fewer if the files hold fewer): WINDOW files at a time,
    a passage of each in turn, up to FIRST_PASS_PASSAGES a file; then the rest of the longer files, in turns.
    A passage whose words (case aside) were seen before is skipped, so vendored copies and shared licences
    count once."""
    seen: set[str] = set()
    passages: list[Passage] = []
    rest: list[list[Passage]] = []

    def take(turns: Iterable[tuple[Passage | None, ...]]) -> bool:
        for turn in turns:
            for passage in turn:
                if passage is None:
                    continue
                key = _dedup_key(passage.text)
                if key not in seen:
                    seen.add(key)
                    passages.append(passage)
                    if len(passages) == count:
                        return True
        return False

    for first in range(0, len(files), WINDOW):
        window = [list(_file_passages(label, path)) for label, path in files[first : first + WINDOW]]
        rest += [found[FIRST_PASS_PASSAGES:] for found in window if len(found) > FIRST_PASS_PASSAGES]
        if take(itertools.zip_longest(*(found[:FIRST_PASS_PASSAGES] for found in window))):
            return passages
    take(itertools.zip_longest(*rest))
    return passages


_VECTORS_FILE = re.compile(r"vectors-([0-9a-f]{16})-.+\.npy")


def _cache_paths(folder: Path, hash_: str, embedder: str) -> tuple[Path, Path]:
    safe = re.sub(r"[^\w.-]+", "-", embedder)
    return folder / f"passages-{hash_}.jsonl", folder / f"vectors-{hash_}-{safe}.npy"


def _read_passages(path: Path, count: int) -> list[Passage]:
    passages: list[Passage] = []
    if not path.exists():
        return passages
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if len(passages) == count:
                break
            row = json.loads(line)
            passages.append(Passage(row["title"], row["text"]))
    return passages


def _write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    temporary = path.with_name(path.name + ".partial")
    write(temporary)
    os.replace(temporary, path)


def _save_passages(path: Path, passages: Sequence[Passage]) -> None:
    def write(target: Path) -> None:
        with target.open("w", encoding="utf-8") as out:
            for p in passages:
                out.write(json.dumps({"title": p.title, "text": p.text}, ensure_ascii=False) + "\n")

    _write_atomically(path, write)


def _save_vectors(path: Path, vectors: npt.NDArray[np.float32]) -> None:
    def write(target: Path) -> None:
        with target.open("wb") as out:
            np.save(out, vectors)

    _write_atomically(path, write)


def _earlier_vectors(folder: Path, embedder: str, current: Path) -> dict[Passage, npt.NDArray[np.float32]]:
    """The vectors this embedder gave passages of other source lists (before a package was installed or
    upgraded), by passage: most passages stay the same, and need not be embedded again."""
    known: dict[Passage, npt.NDArray[np.float32]] = {}
    for path in sorted(folder.glob("vectors-*.npy")):
        match = _VECTORS_FILE.fullmatch(path.name)
        if path == current or not match or _cache_paths(folder, match[1], embedder)[1] != path:
            continue
        vectors = np.load(path, mmap_mode="r")
        passages = _read_passages(folder / f"passages-{match[1]}.jsonl", len(vectors))
        known.update(zip(passages, vectors, strict=False))
    return known


def corpus_load(count: int, folder: Path, roots: dict[str, Path] | None = None) -> Corpus:
    """The first `count` passages of this install's corpus and their vectors by the configured embedder,
    from the cache in `folder` where it has them, else extracted and embedded now (and cached)."""
    began = time.perf_counter()
    files = source_files(roots)
    hash_ = sources_hash(files)
    embedder = embeddings.embedder()
    passages_path, vectors_path = _cache_paths(folder, hash_, embedder)
    folder.mkdir(parents=True, exist_ok=True)
    passages = _read_passages(passages_path, count)
    if len(passages) < count:
        passages = passages_extract(files, count)
        _save_passages(passages_path, passages)
    vectors = np.load(vectors_path, mmap_mode="r") if vectors_path.exists() else None
    have = 0 if vectors is None else min(len(vectors), len(passages))
    kept = np.zeros((0, embeddings.DIMENSIONS), np.float32) if vectors is None else np.array(vectors[:have])
    built = have < len(passages)
    earlier = _earlier_vectors(folder, embedder, vectors_path) if built else {}
    blocks = [kept]
    for start in range(have, len(passages), EMBED_BLOCK):
        block = passages[start : start + EMBED_BLOCK]
        missing = [p for p in block if p not in earlier]
        fresh = dict(
            zip(missing, embeddings.embed([embedding_input(p.title, p.text) for p in missing]), strict=True)
        )
        blocks.append(np.asarray([fresh[p] if p in fresh else earlier[p] for p in block], dtype=np.float32))
        # Written as it goes (the whole array, as a prefix of any larger one): a build cut short keeps its work.
        _save_vectors(vectors_path, np.concatenate(blocks))
    return Corpus(
        passages=passages,
        vectors=np.concatenate(blocks),
        sources_hash=hash_,
        embedder=embedder,
        built_seconds=time.perf_counter() - began if built else 0.0,
        folder=folder,
    )


def first_sentence(text: str) -> str:
    """A passage's first sentence (at most a target passage's length): a question-sized query about it."""
    match = re.search(r"(?<=[.!?])\s", text)
    sentence = text[: match.start()] if match else text
    return sentence[:TARGET_PASSAGE_CHARS]
