"""A git repository as a garden (`import_garden --git URL`, GARDEN_GIT_URL): a bare clone kept under
GARDEN_GIT_DIR is fetched, the branch's head checked out into a folder of its own, and that folder imported as
any garden folder is (`garden_import`), so a git garden follows the same rules: nothing retired by accident, a
moved note keeps its article. A sync imports what changed between the last imported commit and the new head
(`git diff --name-status -M`): a note git sees renamed keeps its article and history even when edited too.
Every revision written records the commit it came from.

What can go wrong is said, on the logs page and `/api/health` (a `Sync` row), and changes nothing: a fetch that
fails (network, credentials, a URL that is not a repository, a branch that is not there), or a commit that
would retire most of the garden (refused by the import, and again at each sync until a later commit or
`--allow-mass-retire`). A force-pushed branch (the last imported commit is no longer in its history) is
imported whole from its new head, and the sync says so. A credential in the URL never reaches a log or message.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from django.conf import settings
from django.db import connection
from django.utils import timezone

from garden.formats.registry import is_note, place_of
from garden.models import ArticleRevision, Sync
from garden.sync.importing import garden_import
from garden.sync.lifecycle import articles_in_garden
from garden.sync.report import ImportReport, sync_record

GIT_FAILED = "git {command} failed: {reason}"
GIT_TIMED_OUT = "git {command} did not finish within {seconds:.0f}s"
GIT_MISSING = "git is not installed (or not on PATH)"
FETCH_FAILED = (
    "{url} (branch {branch}) could not be fetched ({reason}), so the garden's {count} article(s) were left as "
    "they are; the next sync tries again."
)
CHECKOUT_FAILED = (
    "commit {head} could not be checked out ({reason}), so the garden's {count} article(s) were left as they "
    "are; the next sync tries again."
)
HISTORY_REWRITTEN = (
    "the branch's history was rewritten (force-pushed): {before} is no longer in it, so its head {head} was "
    "imported whole"
)
COMMIT_REFUSED = " (commit {head}; the next sync tries it again)"
UNCHANGED = "{head} was imported already: nothing changed"
HIDDEN = "***"
SYNC_FAILED = "the git garden could not be synced; the next fetch tries again"
# A URL's user and password go to git in its environment, read back by this credential helper, never in its
# arguments (which any account on the machine can list) nor in the URL it is given. The helper holds no secret.
CREDENTIAL_USER = "GROUNDWORK_GIT_USERNAME"
CREDENTIAL_PASSWORD = "GROUNDWORK_GIT_PASSWORD"
CREDENTIAL_HELPER = (
    f"!f() {{ if [ \"$1\" = get ]; then printf 'username=%s\\npassword=%s\\n' "
    f'"${CREDENTIAL_USER}" "${CREDENTIAL_PASSWORD}"; fi; }}; f'
)
logger = logging.getLogger(__name__)
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")


class GitError(Exception):
    """A git command that failed, timed out or could not run; its message holds no credential."""


@dataclass(frozen=True)
class Commit:
    hash: str
    time: datetime
    author: str

    @property
    def short(self) -> str:
        return self.hash[:12]


def scrubbed(text: str, *urls: str) -> str:
    """The text without any credential a URL carries: the user and password (or token) before `@` of every URL
    in it, and those of `urls` wherever they appear on their own (git may quote them apart from the URL)."""
    secrets = set()
    for url in urls:
        if match := re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*://([^/@\s]+)@", url):
            secrets |= {match.group(1), *match.group(1).split(":", 1)}
    text = _USERINFO.sub(lambda m: f"{m.group('scheme')}{HIDDEN}@", text)
    for secret in sorted(secrets, key=len, reverse=True):
        if (
            len(secret) >= 4
        ):  # a user name like "git" or "me" is not a secret, and would blank out ordinary words
            text = text.replace(secret, HIDDEN)
    return text


def garden_label(url: str) -> str:
    """How the logs page and `/api/health` name a git garden: its URL without credentials."""
    return scrubbed(url, url)


def remote_credentials(url: str) -> tuple[str, list[str], dict[str, str]]:
    """The URL to give git with no credential in it, the options and the environment that hand git the user and
    password it held (decoded, as git decodes them): none when it holds none, or is not an HTTP(S) URL (an
    ssh:// user is no secret, and ssh reads no credential helper)."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in {"http", "https"} or "@" not in parts.netloc:
        return url, [], {}
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    options = ["-c", "credential.helper=", "-c", f"credential.helper={CREDENTIAL_HELPER}"]  # ours alone
    environment = {CREDENTIAL_USER: unquote(user), CREDENTIAL_PASSWORD: unquote(password)}
    return urlunsplit(parts._replace(netloc=host)), options, environment


def _git(*args: str, cwd: Path | None = None, url: str = "", env: Mapping[str, str] | None = None) -> str:
    """Run git; its output, or GitError with the reason git gave (its last line of errors), scrubbed."""
    command = next((arg for arg in args if arg[0] != "-" and "/" not in arg and "=" not in arg), "git")
    environment = {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",  # a missing credential fails at once instead of waiting for a keyboard
        "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
        "LC_ALL": "C",
        **(env or {}),
    }
    seconds = settings.GARDEN_GIT_TIMEOUT_SECONDS
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=environment,
            capture_output=True,
            text=True,
            timeout=seconds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitError(GIT_TIMED_OUT.format(command=command, seconds=seconds)) from None
    except FileNotFoundError:
        raise GitError(GIT_MISSING) from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
        reason = (fatal or lines or [f"exit status {done.returncode}"])[0]
        reason = reason.removeprefix("fatal: ").removeprefix("error: ")
        raise GitError(GIT_FAILED.format(command=command, reason=scrubbed(reason, url)))
    return done.stdout


@dataclass(frozen=True)
class GitGarden:
    """A repository's branch, and where its clone lives: `mirror` (bare), `tree` (the head, checked out)."""

    url: str
    branch: str
    home: Path

    @classmethod
    def of(cls, url: str, branch: str = "", base: Path | None = None) -> GitGarden:
        branch = branch or settings.GARDEN_GIT_BRANCH
        name = hashlib.sha256(f"{garden_label(url)}\0{branch}".encode()).hexdigest()[:16]
        return cls(url=url, branch=branch, home=(base or Path(settings.GARDEN_GIT_DIR)) / name)

    @property
    def label(self) -> str:
        return garden_label(self.url)

    @property
    def mirror(self) -> Path:
        return self.home / "repo.git"

    @property
    def tree(self) -> Path:
        return self.home / "tree"

    @property
    def ref(self) -> str:
        return f"refs/garden/{self.branch}"

    def _in_mirror(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        return _git("--git-dir", str(self.mirror), *args, url=self.url, env=env)

    def fetch(self) -> Commit:
        """Fetch the branch into the bare clone (made the first time); the head's commit. The URL is given on
        each fetch and never written into the clone's config, and a user and token in it reach git through its
        environment (`remote_credentials`), so they are stored nowhere and no process's arguments show them."""
        if not (self.mirror / "HEAD").exists():
            self.home.mkdir(parents=True, exist_ok=True)
            _git("init", "--bare", "--quiet", str(self.mirror), url=self.url)
        remote, options, credentials = remote_credentials(self.url)
        self._in_mirror(
            *options,
            "fetch",
            "--quiet",
            "--no-tags",
            "--force",
            remote,
            f"+refs/heads/{self.branch}:{self.ref}",
            env=credentials,
        )
        return self.commit(self.ref)

    def commit(self, name: str) -> Commit:
        hash_, when, author = (
            self._in_mirror("log", "-1", "--format=%H%x00%cI%x00%an", name).strip().split("\0")
        )
        return Commit(hash=hash_, time=datetime.fromisoformat(when), author=author)

    def last_commits(self, head: str, paths: set[str]) -> dict[str, Commit]:
        """The last commit up to `head` that changed each of `paths` (those git's log names as given)."""
        out = self._in_mirror(
            "-c",
            "core.quotePath=false",
            "log",
            "--no-renames",
            "--format=%x01%H%x09%cI%x09%an",
            "--name-only",
            head,
        )
        found: dict[str, Commit] = {}
        commit: Commit | None = None
        for line in out.splitlines():
            if line.startswith("\x01"):
                hash_, when, author = line[1:].split("\t", 2)
                commit = Commit(hash=hash_, time=datetime.fromisoformat(when), author=author)
            elif line and commit is not None and line in paths and line not in found:
                found[line] = commit
                if len(found) == len(paths):
                    break
        return found

    def has_commit(self, hash_: str) -> bool:
        try:
            self._in_mirror("cat-file", "-e", f"{hash_}^{{commit}}")
        except GitError:
            return False
        return True

    def is_ancestor(self, before: str, head: str) -> bool:
        if not self.has_commit(before):
            return False
        try:
            self._in_mirror("merge-base", "--is-ancestor", before, head)
        except GitError:
            return False
        return True

    def renames(self, before: str, head: str) -> dict[str, str]:
        """The notes git sees renamed between two commits: their place now -> their place before."""
        out = self._in_mirror("diff", "--name-status", "-M", "-z", before, head)
        fields = out.split("\0")
        renamed: dict[str, str] = {}
        i = 0
        while i < len(fields) and fields[i]:
            status = fields[i]
            if status.startswith(("R", "C")):
                old, new = fields[i + 1], fields[i + 2]
                if status.startswith("R") and _is_note(old) and _is_note(new):
                    renamed[_place(new)] = _place(old)
                i += 3
            else:
                i += 2
        return renamed

    def checkout(self, head: str) -> None:
        """The tree at `head` in `tree`, in place: only the files that differ are written or removed (git's own
        index of the tree, kept beside it), so the garden's folder stays the same path from commit to commit."""
        if not self.tree.is_dir():  # a tree removed by hand: its index no longer says what is there
            (self.home / "index").unlink(missing_ok=True)
        self.tree.mkdir(parents=True, exist_ok=True)
        self._in_mirror(
            "--work-tree",
            str(self.tree),
            "read-tree",
            "-u",
            "--reset",
            head,
            env={"GIT_INDEX_FILE": str(self.home / "index")},
        )


def _is_note(path: str) -> bool:
    return is_note(path)


def _place(path: str) -> str:
    """A note's place in its garden as `Article.path` records it (see `importing._place_of`)."""
    return place_of(Path(path))


def last_imported(garden: GitGarden) -> str:
    """The commit the last sync of this garden imported, or ""."""
    sync = Sync.objects.filter(folders=[garden.label]).exclude(commit="").first()
    return sync.commit if sync else ""


def git_garden_import(
    url: str,
    branch: str = "",
    *,
    base: Path | None = None,
    allow_mass_retire: bool = False,
    **options: Any,
) -> ImportReport:
    """Fetch the branch and import what changed since the last imported commit (the whole head the first time,
    or when the history was rewritten). A fetch that fails changes nothing and is reported in `refused`, as is
    a commit the import refuses; both are recorded for the logs page and `/api/health`. `options` go to
    `garden_import` (progress, workers)."""
    garden = GitGarden.of(url, branch, base)
    try:
        head = garden.fetch()
    except GitError as error:
        report = ImportReport()
        count = articles_in_garden(garden.tree.resolve()).count()
        message = FETCH_FAILED.format(url=garden.label, branch=garden.branch, reason=error, count=count)
        report.refused.append((garden.label, message))
        report.sync_id = sync_record([Path(garden.label)], report).pk
        return report
    before = last_imported(garden)
    if before == head.hash and garden.tree.is_dir():
        report = ImportReport(notices=[(garden.label, UNCHANGED.format(head=head.short))])
        report.unchanged = articles_in_garden(garden.tree.resolve()).count()
        report.sync_id = sync_record([Path(garden.label)], report).pk
        Sync.objects.filter(pk=report.sync_id or 0).update(commit=head.hash)
        return report
    renamed: dict[str, str] = {}
    rewritten = bool(before) and not garden.is_ancestor(before, head.hash)
    try:
        if before and not rewritten:
            renamed = garden.renames(before, head.hash)
        garden.checkout(head.hash)
    except (
        GitError
    ) as error:  # a full disk, a clone damaged by hand: the tree the import would read is not there
        report = ImportReport()
        count = articles_in_garden(garden.tree.resolve()).count()
        message = CHECKOUT_FAILED.format(head=head.short, reason=error, count=count)
        report.refused.append((garden.label, message))
        report.sync_id = sync_record([Path(garden.label)], report).pk
        return report
    began = timezone.now()
    report = garden_import([garden.tree], allow_mass_retire=allow_mass_retire, renamed=renamed, **options)
    if rewritten:
        report.notices.append((garden.label, HISTORY_REWRITTEN.format(before=before[:12], head=head.short)))
    report.refused = [
        (garden.label, message + COMMIT_REFUSED.format(head=head.short)) for _, message in report.refused
    ]
    revisions_stamp(garden, head, since=began)
    sync = Sync.objects.get(pk=report.sync_id or 0)
    sync.folders = [garden.label]
    sync.commit = "" if report.refused else head.hash
    sync.refused = "\n".join(message for _, message in report.refused)
    sync.counts = {**sync.counts, "rewritten": rewritten}
    sync.save(update_fields=["folders", "commit", "refused", "counts"])
    return report


def revisions_stamp(garden: GitGarden, head: Commit, since: datetime) -> int:
    """Record on the revisions this sync wrote the commit they came from: the last commit up to `head` that
    changed the note's file (git's log), else `head` itself."""
    root = garden.tree.resolve()
    written = ArticleRevision.objects.filter(article__garden=str(root), commit="", created_at__gte=since)
    places: dict[str, list[int]] = {}
    for pk, source in written.values_list("pk", "source_path"):
        try:
            places.setdefault(Path(source).relative_to(root).as_posix(), []).append(pk)
        except ValueError:
            places.setdefault("", []).append(pk)
    if not places:
        return 0
    try:
        commits = garden.last_commits(head.hash, set(places))
    except GitError:  # the log is a nicety: the revisions are stamped with the head they were imported at
        commits = {}
    by_commit: dict[Commit, list[int]] = {}
    for place, pks in places.items():
        by_commit.setdefault(commits.get(place, head), []).extend(pks)
    for commit, pks in by_commit.items():
        ArticleRevision.objects.filter(pk__in=pks).update(
            commit=commit.hash, commit_time=commit.time, commit_author=commit.author
        )
    return sum(len(pks) for pks in places.values())


def commit_web_url(commit: str, source_path: str, garden: str) -> str:
    """The web page of a note at a commit (GARDEN_GIT_WEB_URL, with `{commit}` and `{path}`), or "" when no
    address is set or the revision came from no commit."""
    template = settings.GARDEN_GIT_WEB_URL
    if not template or not commit:
        return ""
    try:
        path = Path(source_path).relative_to(garden).as_posix() if garden else Path(source_path).name
    except ValueError:
        path = Path(source_path).name
    return template.replace("{commit}", quote(commit)).replace("{path}", quote(path))


def git_garden_watch(
    url: str,
    branch: str,
    on_report: Callable[[ImportReport], None],
    *,
    every: float,
    stop: Any = None,
    **options: Any,
) -> None:
    """Fetch and sync every `every` seconds until `stop` (a threading.Event) is set or the process is
    interrupted; a sync that fails is reported (see `git_garden_import`) and the next one tries again."""
    import threading

    stopping = stop or threading.Event()
    while not stopping.wait(every):
        try:
            on_report(git_garden_import(url, branch, **options))
        except Exception:  # a bug or an outage in one sync must not end the watch
            logger.exception(SYNC_FAILED)
            connection.close_if_unusable_or_obsolete()
