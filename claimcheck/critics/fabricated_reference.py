"""The `fabricated_reference` critic (warn): the answer names an article, link or citation that does not exist.

It looks for `[n]` citations with no source n, `[[wikilinks]]` and `/articles/<slug>/` links to articles that
are not in the garden, and articles named in quotation marks ("the article 'X'") that match neither an
article's slug nor a source's title. Code is ignored: `a[3]` in a snippet is not a citation. Pure Python.
"""

from __future__ import annotations

import re
from typing import Final

from claimcheck.critics.base import Critic, CriticInput, Finding, blank_code, citation_markers, plural
from claimcheck.terms import Severity
from text.markup import WIKILINK, slugify

__all__ = ["CRITIC", "NAME", "NAMED_ARTICLE", "SEVERITY", "fabricated_references"]

NAME: Final = "fabricated_reference"
SEVERITY: Final = Severity.WARN

PASSED_MESSAGE: Final = "Every article, link and citation the answer names exists."
FAILED_MESSAGE: Final = "The answer names {count} that {verb} not exist: {items}."

# Django's slug path converter, as in the article URL `articles/<slug:slug>/`.
_ARTICLE_LINK = re.compile(r"(?<![\w-])/articles/(?P<slug>[-a-zA-Z0-9_]+)(?=[/#?)\s\"'>\]]|$)")
# "the article 'X'", "the page titled “X”", "the “X” article". A straight single quote only closes a name
# when no letter follows it, so "Kestrel's" stays inside the name.
_QUOTED_NAME = (
    r"(?:\"(?P<{g}1>[^\"\n]{{2,120}})\"|“(?P<{g}2>[^”\n]{{2,120}})”|‘(?P<{g}3>[^’\n]{{2,120}})’"
    r"|'(?P<{g}4>(?:[^'\n]|'(?=\w)){{2,120}})'(?!\w))"
)
NAMED_ARTICLE: Final = re.compile(
    r"\b(?:the|an?|our)\s+(?:wiki\s+|garden\s+)?(?:article|page|entry)\s+(?:titled\s+|called\s+|named\s+|on\s+)?"
    + _QUOTED_NAME.format(g="a")
    + r"|\bthe\s+"
    + _QUOTED_NAME.format(g="b")
    + r"\s+(?:wiki\s+|garden\s+)?(?:article|page|entry)\b",
    re.IGNORECASE,
)


def fabricated_references(critic_input: CriticInput) -> Finding:
    """Report every citation number, link and named article in the answer that does not exist."""
    answer = critic_input.answer
    visible = blank_code(answer)
    slugs = critic_input.article_slugs

    citations: list[int] = []
    for _, _, numbers in citation_markers(answer):
        citations.extend(n for n in numbers if n not in critic_input.sources and n not in citations)

    wikilinks: list[str] = []
    for match in WIKILINK.finditer(visible):
        target = match["target"].strip()
        if slugify(target) not in slugs and target not in wikilinks:
            wikilinks.append(target)

    links: list[str] = []
    for match in _ARTICLE_LINK.finditer(visible):
        slug = match.group("slug")
        if slug not in slugs and slugify(slug) not in slugs and slug not in links:
            links.append(slug)

    titles = {slugify(source.title) for source in critic_input.sources.values()}
    named: list[str] = []
    for match in NAMED_ARTICLE.finditer(visible):
        name = next(group for group in match.groups() if group is not None).strip()
        if name and not _names_an_article(name, slugs, titles) and name not in named:
            named.append(name)

    items = [f"[{n}]" for n in citations]
    items += [f"[[{target}]]" for target in wikilinks]
    items += [f"/articles/{slug}/" for slug in links]
    items += [f"the article “{name}”" for name in named]
    details = {
        "citations": citations,
        "wikilinks": wikilinks,
        "article_links": links,
        "named_articles": named,
    }
    if not items:
        return Finding(passed=True, message=PASSED_MESSAGE, details=details)
    message = FAILED_MESSAGE.format(
        count=plural(len(items), "reference"),
        verb="does" if len(items) == 1 else "do",
        items=", ".join(items),
    )
    return Finding(passed=False, message=message, details=details)


def _names_an_article(name: str, slugs: frozenset[str], titles: set[str]) -> bool:
    """Whether a quoted name is an article: its slug, a source's title, or the start of a longer slug.

    Readers shorten titles ("the 'Harrowden Viaduct' article" for `harrowden-viaduct-restoration`), so a
    slug that begins with the name's words counts; a name that matches nothing is what gets reported.
    """
    slug = slugify(name)
    if not slug:
        return True
    if slug in slugs or slug in titles:
        return True
    return any(candidate.startswith(slug + "-") for candidate in slugs)


CRITIC: Final = Critic(NAME, SEVERITY, fabricated_references)
