"""The front door and the docs behind it: README stays short and opens with the two commands, and every relative
link in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md leads to a file that exists, and to a heading that
exists when it names one.

Pure file reading: no database, no settings."""

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted([README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").rglob("*.md")])
README_MAX_LINES = 150

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`+[^`\n]*`+")
# [text](target) and ![alt](target); the text may hold one level of brackets, the target no spaces.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:...


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text lower-cased, punctuation dropped, spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading anchors by its text
    text = text.replace("`", "").lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file; a repeated heading gets -1, -2... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for match in HEADING.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(prose(path.read_text(encoding="utf-8")))
        if not EXTERNAL.match(target)
    ]


def test_slugs_are_githubs() -> None:
    assert slug("The refusal gate, per garden") == "the-refusal-gate-per-garden"
    assert slug("What `make run` starts") == "what-make-run-starts"
    assert slug("manage.py") == "managepy"
    assert slug("The bench's corpus of real text") == "the-benchs-corpus-of-real-text"
    assert slug("0001: The engine without Django") == "0001-the-engine-without-django"


def test_links_are_found_outside_code_only() -> None:
    text = (
        "See [Settings](docs/settings.md#a) and `[not](a link)`.\n```\n[nor](this)\n```\n![a picture](x.png)"
    )
    assert LINK.findall(prose(text)) == ["docs/settings.md#a", "x.png"]


def test_readme_is_a_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "make run" in text and "make test" in text


def broken_links(path: Path) -> list[str]:
    """The relative links of the Markdown file at `path` that lead to no file, or to no such heading."""
    broken = []
    for target in relative_links(path):
        place, _, anchor = target.partition("#")
        destination = (path.parent / place).resolve() if place else path
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{target}: no heading #{anchor} in {destination.name}")
    return broken


def test_a_link_to_a_missing_file_or_heading_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# Set up\n\n## The loop\n", encoding="utf-8")
    (tmp_path / "picture.png").write_bytes(b"")
    page = tmp_path / "page.md"
    page.write_text(
        "# Here\n[ok](there.md#the-loop) [ok](#here) ![ok](picture.png) [ok](https://example.org/gone.md)\n"
        "[gone](gone.md) [no heading](there.md#the-fast-loop) [nor here](#nowhere) ![no picture](gone.png)\n",
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "gone.md: no such file",
        "there.md#the-fast-loop: no heading #the-fast-loop in there.md",
        "#nowhere: no heading #nowhere in page.md",
        "gone.png: no such file",
    ]


@pytest.mark.parametrize("path", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(path: Path) -> None:
    assert broken_links(path) == []
