"""The bench's corpus of real passages: the same install gives the same passages, each once, prose rather than
code, embedded once and loaded from the cache after."""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from bench.corpus import MIN_PASSAGE_CHARS, corpus_load, passages_extract, source_files
from garden.passages import MAX_PASSAGE_CHARS
from providers import embeddings

PROSE = (
    "The hive keeps its honey in the upper frames, where the bees can reach it through the winter. A keeper "
    "who takes too much in autumn leaves the colony short before the first flowers open in spring."
)


def _module(number: int) -> str:
    # Each module's prose differs (the number is spelled into its words), so no two are duplicates.
    words = " ".join(["apple", "pear", "plum", "quince", "cherry"][int(d) % 5] for d in f"{number:04d}")
    return (
        f'"""Module {words} explains the orchard.\n\n{PROSE} The {words} trees flower late."""\n\n'
        f"# The {words} rootstock is chosen for a cold site: it flowers after the last frost has gone and\n"
        f"# the keeper's bees are out. A graft taken from the old tree keeps the variety alive for decades.\n"
        "def press(apples):\n"
        f'    """Press {words} apples into cider.\n\n'
        "    >>> press([1, 2, 3])\n    6\n\n"
        f"    {PROSE}\n"
        '    """\n'
        "    return sum(apples)\n"
    )


@pytest.fixture
def install(tmp_path: Path) -> dict[str, Path]:
    """A small install: a package of modules, a vendored copy of one of them, a README, and Debian docs."""
    packages = tmp_path / "site-packages"
    for number in range(30):
        path = packages / "orchard" / f"tree_{number:02d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_module(number), encoding="utf-8")
    vendored = packages / "cider" / "_vendor" / "orchard" / "tree_00.py"
    vendored.parent.mkdir(parents=True)
    vendored.write_text(_module(0), encoding="utf-8")
    (packages / "orchard" / "README.rst").write_text(
        f"Orchard\n=======\n\n{PROSE} Read on for pruning.\n\n.. code-block:: python\n\n    press([1])\n",
        encoding="utf-8",
    )
    (packages / "orchard" / "__pycache__").mkdir()
    (packages / "orchard" / "__pycache__" / "notes.txt").write_text(PROSE, encoding="utf-8")
    docs = tmp_path / "doc" / "orchard-tools"
    docs.mkdir(parents=True)
    (docs / "changelog.Debian.gz").write_bytes(
        gzip.compress(f"orchard-tools (1.0-1) unstable\n\n  * Pruning: {PROSE}\n".encode())
    )
    (docs / "example.c").write_text(f"/* {PROSE} */\nint main(void) {{ return 0; }}\n", encoding="utf-8")
    return {"site-packages": packages, "doc": tmp_path / "doc"}


class FakeEmbedder:
    """Stands in for the model: deterministic unit vectors, and a count of the texts it was asked to embed."""

    def __init__(self) -> None:
        self.texts = 0

    def __call__(self, texts: Sequence[str], **options: object) -> npt.NDArray[np.float32]:
        self.texts += len(texts)
        rows = np.asarray(
            [np.random.default_rng(sum(map(ord, t))).normal(size=embeddings.DIMENSIONS) for t in texts],
            dtype=np.float32,
        ).reshape(len(texts), embeddings.DIMENSIONS)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture
def fake_embed(monkeypatch: pytest.MonkeyPatch) -> FakeEmbedder:
    fake = FakeEmbedder()
    monkeypatch.setattr(embeddings, "embed", fake)
    return fake


def test_the_same_install_gives_the_same_passages_in_the_same_order(install: dict[str, Path]) -> None:
    first = passages_extract(source_files(install), 1_000)
    again = passages_extract(source_files(install), 1_000)
    assert first == again
    assert len(first) > 30
    # A small corpus is the start of a larger one.
    assert passages_extract(source_files(install), 10) == first[:10]


def test_passages_are_prose_of_the_importers_size_each_once(install: dict[str, Path]) -> None:
    passages = passages_extract(source_files(install), 1_000)
    texts = [p.text for p in passages]
    assert len(set(texts)) == len(texts)
    # The vendored copy of a module adds nothing, and only one module's passages mention its own words.
    assert not any(p.title.startswith("cider") for p in passages)
    assert all(len(t) >= MIN_PASSAGE_CHARS for t in texts)
    assert not any(">>>" in t or "return sum" in t or "code-block" in t or "int main" in t for t in texts)
    titles = {p.title for p in passages}
    assert "orchard.tree_07" in titles  # a module's docstrings and comments, titled by its dotted name
    assert "orchard-tools/changelog.Debian" in titles  # Debian's gzipped docs are read
    assert "orchard/README.rst" in titles
    assert not any("__pycache__" in title or title.endswith(".c") for title in titles)
    assert any("rootstock is chosen for a cold site" in t for t in texts)  # comments are prose too


def test_the_corpus_is_embedded_once_and_then_loaded_from_the_cache(
    install: dict[str, Path], tmp_path: Path, fake_embed: FakeEmbedder
) -> None:
    cache = tmp_path / "cache"
    built = corpus_load(20, cache, install)
    assert fake_embed.texts == 20
    assert built.vectors.shape == (20, embeddings.DIMENSIONS)
    assert built.built_seconds > 0

    loaded = corpus_load(20, cache, install)
    assert fake_embed.texts == 20  # nothing embedded again
    assert loaded.built_seconds == 0
    assert loaded.passages == built.passages
    np.testing.assert_array_equal(loaded.vectors, built.vectors)

    fewer = corpus_load(5, cache, install)
    assert fake_embed.texts == 20
    np.testing.assert_array_equal(fewer.vectors, built.vectors[:5])

    more = corpus_load(30, cache, install)
    assert fake_embed.texts == 30  # only the ten passages the cache did not have
    assert more.passages[:20] == built.passages
    np.testing.assert_array_equal(more.vectors[:20], built.vectors)


def test_another_embedder_or_another_install_is_another_cache(
    install: dict[str, Path], tmp_path: Path, fake_embed: FakeEmbedder, settings: pytest.FixtureRequest
) -> None:
    cache = tmp_path / "cache"
    first = corpus_load(10, cache, install)
    settings.EMBEDDING_BACKEND = "torch"  # type: ignore[attr-defined]
    assert corpus_load(10, cache, install).embedder != first.embedder
    assert fake_embed.texts == 20

    (install["site-packages"] / "orchard" / "tree_99.py").write_text(_module(99), encoding="utf-8")
    changed = corpus_load(10, cache, install)
    assert changed.sources_hash != first.sources_hash


def test_after_a_package_is_installed_only_its_passages_are_embedded(
    install: dict[str, Path], tmp_path: Path, fake_embed: FakeEmbedder
) -> None:
    cache = tmp_path / "cache"
    before = corpus_load(1_000, cache, install)
    embedded = fake_embed.texts
    (install["site-packages"] / "orchard" / "tree_99.py").write_text(_module(99), encoding="utf-8")
    after = corpus_load(1_000, cache, install)
    assert after.sources_hash != before.sources_hash
    new = set(after.passages) - set(before.passages)
    assert new and fake_embed.texts == embedded + len(new)
    rows = {p: row for p, row in zip(before.passages, before.vectors, strict=True)}
    for passage, row in zip(after.passages, after.vectors, strict=True):
        if passage in rows:
            np.testing.assert_array_equal(row, rows[passage])


def test_a_paragraph_the_importer_cannot_cut_is_left_out(install: dict[str, Path]) -> None:
    names = " ".join(["Alice Baker", "Carol Dunn", "Eve Frost"] * 80)  # no sentence end in 2,000+ characters
    (install["site-packages"] / "orchard" / "ACKS.txt").write_text(
        f"{names}\n\n{PROSE} Thanks to all.\n", encoding="utf-8"
    )
    passages = passages_extract(source_files(install), 1_000)
    assert all(len(p.text) <= MAX_PASSAGE_CHARS for p in passages)
    assert any(p.title == "orchard/ACKS.txt" for p in passages)  # its prose paragraph is kept
