"""`python -m bench.org_reading`: what reading a 1 MB Org file costs, and the Markdown reading's share of it
(docs/performance.md, "Reading Org files"). The file is the Org test garden's `hive-care.org`, its public
section repeated; no database is used."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from bench import django_setup

SOURCE = (
    Path(__file__).resolve().parent.parent / "tests" / "garden" / "gardens" / "org-roam" / "hive-care.org"
)
SIZE = 1_000_000
TRIES = 3


def _best(run: Callable[[], object]) -> float:
    """The least wall time of TRIES runs, in seconds."""
    best = float("inf")
    for _ in range(TRIES):
        began = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - began)
    return best


def main() -> None:
    django_setup()
    from garden.formats.markdown import parse_article_text
    from garden.formats.org.reading import parse_org_text

    text = SOURCE.read_text(encoding="utf-8")
    head, _, rest = text.partition("* Winter")
    section = "* Winter" + rest.split("* Hive records")[0]  # what is public of it
    org = head + section * (SIZE // len(section))
    markdown = parse_org_text(org, path="bench.org", place="bench").body
    org_seconds = _best(lambda: parse_org_text(org, path="bench.org", place="bench"))
    markdown_seconds = _best(lambda: parse_article_text(markdown, path="bench.md", slug="bench"))
    print(f"parse_org_text: {len(org):,} characters in {org_seconds * 1000:.0f} ms (best of {TRIES})")
    print(f"parse_article_text of it: {len(markdown):,} characters in {markdown_seconds * 1000:.0f} ms")


if __name__ == "__main__":
    main()
