"""Reads of the garden shaped for pages and the API."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from django.conf import settings
from django.contrib.postgres.aggregates import JSONBAgg
from django.db.models import BooleanField, Count, Exists, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.expressions import RawSQL
from django.db.models.functions import Length
from django.urls import reverse

from garden.anchors import AnchoredPassages, anchored_revisions
from garden.models import (
    Answer,
    AnswerSource,
    Article,
    ArticleRevision,
    Conversation,
    Image,
    Link,
    Passage,
    RetrievedArticle,
    Theme,
    Topic,
)
from garden.readers import ALL_AUDIENCES, Reader
from text.markup import EMBED, MARKDOWN_LINK, WIKILINK, written_key

# What operators see in place of an answer, or a passage of it, whose sources include a withheld note (readers
# are told ANSWER_NOT_SHARED: `answer_hidden_message`).
ANSWER_WITHHELD = "This answer is not shown: a note it drew on is no longer public in the garden."
# What a reader sees in place of an answer drawn from notes of an audience they are not in: nothing more.
ANSWER_NOT_SHARED = "This answer is not shown: it drew on notes that are not shared with you."
# What a page shows where it embeds a note of an audience the reader is not in: not its title, nor its text.
NOTE_NOT_SHARED = "A note not shared with you."
# Where `article_links` sends a link to such a note: the page shows NOTE_NOT_SHARED_LINK instead of its words.
NOT_SHARED_LINK = "#not-shared"
NOTE_NOT_SHARED_LINK = "a note not shared with you"


@dataclass(frozen=True)
class Embedded:
    """A note another embeds: its title, its page and its current text."""

    title: str
    url: str
    body: str | None  # None: too long for what the page has left to show (`article_embeds`)
    shared: bool = True  # False: a note of an audience the reader is not in (nothing else of it is here)
    # Its own links as the reader is shown them (`links_resolved`): its names are theirs to see, or not, too.
    links: Mapping[str, str | None] = field(default_factory=dict)


NOT_SHARED = Embedded(title="", url="", body=None, shared=False)


def _answers_loaded(reader: Reader) -> QuerySet[Answer]:
    """Answers with their question, conversation, retrieval, retrieved articles and numbered sources loaded; of
    what retrieval found, only what `reader` may see (`answer_hidden_reason` says whether the answer itself may be)."""
    # Each source's note's links to notes not the reader's (`answer_links_hidden`), in the sources' own query.
    hidden = (
        Link.objects.filter(source_id=OuterRef("passage__article_id"), target__isnull=False)
        .filter(target__withheld_at__isnull=True)
        .exclude(target__in=Article.objects.readable(reader))
        .values("source_id")
        .annotate(written=JSONBAgg("written"))
        .values("written")
    )
    sources = AnswerSource.objects.select_related("passage__article", "passage__revision")
    # Whether a turn before the answer's is one the reader may not see (`answer_searched_for`).
    earlier_hidden = AnswerSource.objects.filter(
        answer__question__conversation=OuterRef("question__conversation"),
        answer__question__turn__lt=OuterRef("question__turn"),
    ).filter(Exists(Passage.objects.unreadable(reader).filter(pk=OuterRef("passage_id"))))
    answers = Answer.objects.annotate(earlier_hidden=Exists(earlier_hidden))
    return answers.select_related("question__retrieval", "question__conversation").prefetch_related(
        Prefetch("sources", sources.annotate(links_hidden=Subquery(hidden))),
        Prefetch(
            "question__retrieval__articles",
            RetrievedArticle.objects.select_related("article")
            .filter(article__in=Article.objects.readable(reader))
            .order_by("rank"),
        ),
        Prefetch("question__retrieval__topics", Topic.objects.read_by(reader)),
        Prefetch("question__retrieval__themes", Theme.objects.live(reader)),
    )


def answer_get(public_id: uuid.UUID, reader: Reader) -> Answer | None:
    """The answer at `public_id` (its address), loaded as `_answers_loaded` says."""
    return _answers_loaded(reader).filter(public_id=public_id).first()


def answer_hidden_message(reader: Reader) -> str:
    """What `reader` is told in place of an answer (or its verdict) they may not see. Withheld from everyone
    and drawn on notes not theirs read alike (ANSWER_NOT_SHARED), on every path that shows an answer, so
    nothing tells a reader whether a note of another audience went private; an operator, who reads every
    audience, is told it is withheld (ANSWER_WITHHELD)."""
    return ANSWER_WITHHELD if reader.reads_all else ANSWER_NOT_SHARED


def answer_hidden_reason(answer: Answer, reader: Reader) -> str | None:
    """Why `reader` may not see `answer` (loaded by `answer_get`), as they are told (`answer_hidden_message`),
    or None when they may."""
    return answer_hidden_message(reader) if answer.withheld_from(reader) else None


def verdict_hidden_reason(answer: Answer, reader: Reader) -> str | None:
    """`answer_hidden_reason` for an answer loaded without its sources (the verdict endpoints): one query."""
    if Answer.objects.readable(reader).filter(pk=answer.pk).exists():
        return None
    return answer_hidden_message(reader)


def conversation_get(public_id: uuid.UUID) -> Conversation | None:
    return Conversation.objects.filter(public_id=public_id).first()


def conversation_answers(
    conversation: Conversation, reader: Reader, turns: range | None = None
) -> list[Answer]:
    """The answers of the conversation's turns (those numbered in `turns`, or all), in order, each loaded for
    `reader` as `answer_get` loads one."""
    answers = _answers_loaded(reader).filter(question__conversation=conversation)
    if turns is not None:
        answers = answers.filter(question__turn__gte=turns.start, question__turn__lt=turns.stop)
    return list(answers.order_by("question__turn"))


def article_list(reader: Reader) -> QuerySet[Article]:
    """The articles live for `reader` (readable by them, not retired), by title."""
    return (
        Article.objects.live(reader)
        .prefetch_related(Prefetch("topics", Topic.objects.read_by(reader)))
        .annotate(revision_count=Count("revisions"))
        .order_by("title", "pk")  # a whole order: pages neither repeat nor skip articles of one title
    )


def article_get(slug: str, reader: Reader) -> Article | None:
    """The article at `slug` if `reader` may see it (a withheld one, or one of an audience not theirs, is as
    if it did not exist), with the topics and themes they may see."""
    return (
        Article.objects.readable(reader)
        .prefetch_related(
            Prefetch("topics", Topic.objects.read_by(reader)), Prefetch("themes", Theme.objects.live(reader))
        )
        .filter(slug=slug)
        .first()
    )


def topic_get(slug: str, reader: Reader) -> Topic | None:
    """The topic at `slug` if it has an article live for `reader`, with the names they may see it by."""
    return Topic.objects.read_by(reader).filter(slug=slug).first()


def article_revision(article: Article, revision_id: int | None, reader: Reader) -> ArticleRevision | None:
    """The requested revision of an article, or its current one; an older one that holds words of a note
    withheld now, or not the reader's, is as if it did not exist."""
    revisions = article.revisions.all()
    if revision_id is not None:
        revisions = revisions.readable(reader)
    if revision_id is not None:
        return revisions.filter(pk=revision_id).first()
    return revisions.filter(superseded=False).first()


# What a page shows of a passage that holds words of a note its reader may not read (decision 0006).
BLOCK_NOT_SHARED = "(a block not shared with you)"


def revision_passages(revision: ArticleRevision, reader: Reader) -> list[Passage]:
    """The revision's passages in order, as `reader`'s page shows them: one holding words another note lends
    it that `reader` may not read (`Passage.shows`) reads BLOCK_NOT_SHARED."""
    passages = list(revision.passages.order_by("ordinal"))
    if revision.shows:
        hidden = set(revision.passages.unreadable(reader).values_list("pk", flat=True))
        for passage in passages:
            if passage.pk in hidden:
                passage.text = BLOCK_NOT_SHARED
    return passages


def _not_shared(revisions: Mapping[int, Sequence[str]], reader: Reader) -> dict[int, list[tuple[int, int]]]:
    """For revisions (id -> `shows`), where each holds words `reader` may not read: one query, none when no
    revision holds another note's words."""
    borrowing = [pk for pk, shows in revisions.items() if shows]
    hidden: dict[int, list[tuple[int, int]]] = {}
    if borrowing:
        passages = Passage.objects.filter(revision_id__in=borrowing).unreadable(reader)
        for pk, start, end in passages.values_list("revision_id", "start", "end"):
            hidden.setdefault(pk, []).append((start, end))
    return hidden


def _body_shown(body: str, hidden: Sequence[tuple[int, int]]) -> str:
    """`body` with each stretch of `hidden` read BLOCK_NOT_SHARED."""
    for start, end in sorted(hidden, reverse=True):
        body = f"{body[:start]}{BLOCK_NOT_SHARED}{body[end:]}"
    return body


# A page resolves its anchored links (`[[Note#Heading]]`) into at most this many notes, each note's text read
# once for its headings; a link into one more goes to the top of its note, as a link without an anchor does.
ANCHORED_NOTES_MAX = 50


def article_links(
    article: Article, revision: ArticleRevision | None = None, *, reader: Reader
) -> dict[str, str | None]:
    """Each target the article's note writes (lower case, no .md) -> the URL of the article it resolved to,
    or None for a red link (a note the garden does not have, or withheld), or NOT_SHARED_LINK for a note of an
    audience `reader` is not in (its page shows none of the words the link gives it). A link to a heading or block of a note
    (`[[Note#Heading]]`, `[[Note#^id]]` in `revision`) -> the passage that holds it: all of them in one query,
    however many the note writes."""
    links, targets = links_resolved(article.links_out.select_related("target"), reader)
    anchored: dict[int, dict[str, Article]] = {}  # target's pk -> its anchors as linked (lower case)
    for match in WIKILINK.finditer(revision.body if revision else ""):
        target = targets.get(written_key(match["target"]))
        anchor = (match["anchor"] or "").strip().lower()
        room = target is not None and (target.pk in anchored or len(anchored) < ANCHORED_NOTES_MAX)
        if target is not None and anchor and room:
            anchored.setdefault(target.pk, {})[f"{written_key(match['target'])}#{anchor}"] = target
    for current in anchored_revisions(list(anchored)):
        passages = AnchoredPassages(current)
        for key, target in anchored[current.article_id].items():
            url = passages.url(target, key.split("#", 1)[1])
            if url is not None:
                links[key] = url
    return links


def links_resolved(links: Iterable[Link], reader: Reader) -> tuple[dict[str, str | None], dict[str, Article]]:
    """What one note's links (their targets loaded) show `reader`, the one place a link's name is decided for a
    reader at any depth (the page's own text, or a note it embeds): each target as written -> the URL of its
    article, None for a red link (no such note, or withheld), or NOT_SHARED_LINK for a note of an audience not
    theirs; and the articles of the URLs given, by the same keys."""
    shown: dict[str, str | None] = {}
    targets: dict[str, Article] = {}
    for link in links:
        target = link.target if link.target is not None and not link.target.withheld else None
        if target is not None and not reader.may_read(target.audiences):
            shown.update(dict.fromkeys(link.written, NOT_SHARED_LINK))
            continue
        for written in link.written:
            shown[written] = target.get_absolute_url() if target else None  # a withheld note: a red link
            if target is not None:
                targets[written] = target
    return shown, targets


# A link or embed of a note in a passage: `[[Note]]`, `[[Note#Heading|words]]`, `![[Note]]`.
_PASSAGE_LINK = re.compile(f"!?{WIKILINK.pattern}")
# A link a quote or an excerpt cuts at its end (`… see [[Zorv`, `… [on its page](hr/Zorv`) or at its start
# (`rv pay]] and …`, `vath%20pay.md) and …`): what is left of it, up to the text's edge.
_CUT_AT_END = re.compile(r"!?\[\[(?P<wiki>[^\]\n]*)\]?\Z|(?<!!)\[[^\[\]]*+\]\((?P<markdown><?[^)\s]*)\Z")
_CUT_AT_START = re.compile(
    r"\A\[?(?P<wiki>[^\[\]\n]*)\]\]|\A(?P<markdown>[^\[\]()\s]*?\.md(?:#[^)\s>]*)?>?\))", re.IGNORECASE
)


def passages_shown(
    passages: Iterable[Passage], reader: Reader, hidden: Mapping[int, set[str]] | None = None
) -> dict[int, str]:
    """Each passage's text (by its id) as `reader` is shown it, in an answer's sources or a search: see
    `texts_shown`."""
    passages = list(passages)
    shown = texts_shown([(c.article_id, c.text) for c in passages], reader, hidden)
    return dict(zip([c.pk for c in passages], shown, strict=True))


def answer_searched_for(answer: Answer) -> str | None:
    """What retrieval searched for when it was not the question's own words (`Question.searched_for`), as the
    answer's reader is shown it: None also when a turn before it is one they may not see (`answer_get` loads
    that; an answer loaded otherwise shows none), since a follow-up's search carries the words of the turns
    before it."""
    if getattr(answer, "earlier_hidden", True):
        return None
    return answer.question.searched_for or None


def answer_links_hidden(answer: Answer) -> dict[int, set[str]] | None:
    """The links of the answer's sources' notes to notes not its reader's (each source article's id -> the
    targets as written), as `answer_get` loaded them: no query. None when they were not loaded so (whoever
    renders its passages then looks them up)."""
    hidden: dict[int, set[str]] = {}
    for source in answer.sources.all():
        if not hasattr(source, "links_hidden"):
            return None
        for written in source.links_hidden or []:
            hidden.setdefault(source.passage.article_id, set()).update(written)
    return hidden


def texts_shown(
    texts: Sequence[tuple[int | None, str]], reader: Reader, hidden: Mapping[int, set[str]] | None = None
) -> list[str]:
    """Each (article id, text of that article's note: a passage or a quote of one) as `reader` is shown it: a
    link (a wikilink or a Markdown link) or embed of a note of an audience not theirs reads
    NOTE_NOT_SHARED_LINK, without the words it names that note by, as the article page shows it
    (`article_links`). The stored text stays as written. One query however many texts; none with `hidden`
    (`answer_links_hidden`: each article's links to notes not the reader's, loaded with its answer)."""
    if reader.reads_all or not texts:
        return [text for _, text in texts]
    not_shared: dict[int, set[str]] = {} if hidden is None else dict(hidden)
    if hidden is None:
        for source_id, written, audiences, withheld_at in Link.objects.filter(
            source_id__in={article_id for article_id, _ in texts if article_id is not None},
            target__isnull=False,
        ).values_list("source_id", "written", "target__audiences", "target__withheld_at"):
            if withheld_at is None and not reader.may_read(audiences):
                not_shared.setdefault(source_id, set()).update(written)

    def shown(article_id: int | None, text: str) -> str:
        theirs = not_shared.get(article_id) if article_id is not None else None
        if not theirs:
            return text
        text = _PASSAGE_LINK.sub(
            lambda m: NOTE_NOT_SHARED_LINK if written_key(m["target"]) in theirs else m[0], text
        )
        text = MARKDOWN_LINK.sub(
            lambda m: NOTE_NOT_SHARED_LINK if written_key(m[2]) in theirs else m[0], text
        )
        return _cut_links_shown(text, theirs)

    return [shown(article_id, text) for article_id, text in texts]


def revision_text_shown(revision: ArticleRevision, reader: Reader) -> str:
    """A revision's whole text as `reader` is shown it, never its raw body: as its page shows its passages
    (`revision_passages`) and `texts_shown` a passage's links (what an agent reads of an article,
    `read_article` and its resources)."""
    hidden = _not_shared({revision.pk: revision.shows}, reader).get(revision.pk, [])
    return texts_shown([(revision.article_id, _body_shown(revision.body, hidden))], reader)[0]


def _cut_links_shown(text: str, theirs: set[str]) -> str:
    """`text` with a link it cuts at either edge (`_CUT_AT_END`, `_CUT_AT_START`) read NOTE_NOT_SHARED_LINK when
    it may be one of `theirs` (the targets as written that the reader may not read): what is left of it would
    name the start or the end of that note's title. A wikilink cut before its heading's `#` may have kept only
    its heading or its words, which cannot tell whose it is: hidden too, as it may be theirs."""
    if (end := _CUT_AT_END.search(text)) is not None:
        if end["wiki"] is not None:
            target, *rest = re.split(r"[#|]", end["wiki"], maxsplit=1)
        else:
            target, rest = end["markdown"].removeprefix("<"), []
        key = written_key(re.sub(r"%[0-9a-f]?\Z", "", target, flags=re.I))  # a `%20` cut in two
        if any(name == key if rest else name.startswith(key) for name in theirs):
            text = text[: end.start()] + NOTE_NOT_SHARED_LINK
    if (start := _CUT_AT_START.match(text)) is not None:
        if start["wiki"] is not None:
            target = start["wiki"].partition("|")[0]
            hidden = "#" not in target or _ends_one_of(target.partition("#")[0], theirs)
        else:
            hidden = _ends_one_of(re.split(r"[#>)]", start["markdown"], maxsplit=1)[0], theirs)
        if hidden:
            text = NOTE_NOT_SHARED_LINK + text[start.end() :]
    return text


def _ends_one_of(tail: str, theirs: set[str]) -> bool:
    """Whether `tail`, the end of a link's target as written (`rv pay`, `20pay.md`), may end one of `theirs`."""
    key, escaped = written_key(tail), tail.strip().lower().removesuffix(".md")
    return any(name.endswith(key) or quote(name).endswith(escaped) for name in theirs)


def article_embeds(revision: ArticleRevision, reader: Reader) -> dict[str, Embedded]:
    """The notes this revision embeds (`![[Note]]`), by the target as written, with their current text: in order
    of their first embed, as long as their texts together fit `settings.EMBED_MAX_CHARS`; a note that does not
    fit comes without its text (`body` None), and no more than that is read; a note of an audience `reader` is
    not in is `NOT_SHARED`. Each shown note's own links come resolved for the same reader, so what it links or
    embeds in turn names a note not theirs no more than the page does, and words another note lends it read as
    its page shows them (`revision_passages`). Four queries however many (five when one borrows words)."""
    keys = list(dict.fromkeys(written_key(match["target"]) for match in EMBED.finditer(revision.body)))
    if not keys:
        return {}
    by_key: dict[str, Article] = {}
    not_shared: set[str] = set()
    shows: dict[int, list[str]] = {}
    links = revision.article.links_out.filter(
        written__overlap=keys, target__in=Article.objects.live(ALL_AUDIENCES)
    )
    for link in links.select_related("target"):
        for key in set(keys).intersection(link.written):
            if link.target is not None and reader.may_read(link.target.audiences):
                by_key[key] = link.target
            elif link.target is not None:
                not_shared.add(key)
    currents: dict[int, tuple[int, str, int]] = {}  # each embedded note's current revision: not its text yet
    for pk, article_id, title, length, borrowed in (
        ArticleRevision.objects.filter(
            article_id__in={target.pk for target in by_key.values()}, superseded=False
        )
        .annotate(length=Length("body"))
        .values_list("pk", "article_id", "title", "length", "shows")
    ):
        currents[article_id], shows[pk] = (pk, title, length), borrowed
    left, fitting = settings.EMBED_MAX_CHARS, set()
    for key in keys:
        if key in by_key and by_key[key].pk in currents:
            pk, _, length = currents[by_key[key].pk]
            if pk not in fitting and length <= left:
                left -= length
                fitting.add(pk)
    bodies = dict(ArticleRevision.objects.filter(pk__in=fitting).values_list("pk", "body")) if fitting else {}
    hidden = _not_shared(
        {pk: shows[pk] for pk in fitting}, reader
    )  # what they borrow, as their pages show it
    bodies = {pk: _body_shown(body, hidden.get(pk, [])) for pk, body in bodies.items()}
    shown_ids = {article_id for article_id, (pk, _, _) in currents.items() if pk in fitting}
    links_of: dict[int, list[Link]] = {}
    if shown_ids:
        for link in Link.objects.filter(source_id__in=shown_ids).select_related("target"):
            links_of.setdefault(link.source_id, []).append(link)
    embedded: dict[str, Embedded] = dict.fromkeys(not_shared, NOT_SHARED)
    for key, target in by_key.items():
        if target.pk in currents:
            pk, title, _ = currents[target.pk]
            own_links = links_resolved(links_of.get(target.pk, []), reader)[0]
            embedded[key] = Embedded(title, target.get_absolute_url(), bodies.get(pk), links=own_links)
    return embedded


def revision_images(revision: ArticleRevision) -> dict[str, str]:
    """The images the revision shows, as written (lower case) -> the URL that serves each."""
    names = dict(Image.objects.filter(sha256__in=revision.images.values()).values_list("sha256", "name"))
    return {
        written: reverse("dashboard:image", args=[digest, names[digest]])
        for written, digest in revision.images.items()
        if digest in names
    }


def image_get(sha256: str, reader: Reader) -> Image | None:
    """The image of this hash while a revision `reader` may see shows it (`RevisionQuerySet.readable`): an
    image only a withheld note, or notes not theirs, show is as if it did not exist."""
    shown = ArticleRevision.objects.readable(reader).filter(
        RawSQL(
            "EXISTS (SELECT 1 FROM jsonb_each_text(images) AS shown WHERE shown.value = %s)",
            [sha256],
            output_field=BooleanField(),
        )
    )
    return Image.objects.filter(sha256=sha256).filter(Exists(shown)).first()


def article_backlinks(article: Article, reader: Reader) -> QuerySet[Article]:
    """The articles live for `reader` that link to `article` ("Linked from")."""
    return Article.objects.live(reader).filter(links_out__target=article).distinct().order_by("title")
