"""A git repository as a garden, with real `git` against bare repositories made here: the head is imported,
a push is synced by the commits' difference, a rename keeps its article, and the accidents (a force-push, a
broken URL, a non-repository, a mass deletion) change nothing by accident and say why, with no credential."""

import base64
import http.server
import os
import subprocess
import threading
from pathlib import Path
from urllib.parse import quote

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from garden.management.commands.import_garden import EXIT_REFUSED
from garden.models import Article, ArticleRevision, Sync
from garden.sync import garden_sync_configured, git
from garden.sync.git import GitGarden, git_garden_import, git_garden_watch, scrubbed
from garden.sync.importing import MASS_RETIRE
from garden.sync.report import ImportReport
from tests.factories import page_text, verification_with_claims
from tests.garden.test_accidents import refusal_shown
from tests.garden.test_sync import note

pytestmark = pytest.mark.django_db

AUTHOR = {
    "GIT_AUTHOR_NAME": "Ada Beekeeper",
    "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada Beekeeper",
    "GIT_COMMITTER_EMAIL": "ada@example.org",
}


class Repo:
    """A bare repository (the remote) and a working clone that commits and pushes to it."""

    def __init__(self, root: Path) -> None:
        self.remote = root / "remote.git"
        self.work = root / "work"
        self.run("init", "--bare", "--quiet", "--initial-branch=main", str(self.remote), cwd=root)
        self.run("init", "--quiet", "--initial-branch=main", str(self.work), cwd=root)
        self.run("remote", "add", "origin", str(self.remote))

    def run(self, *args: str, cwd: Path | None = None) -> str:
        return subprocess.run(
            ["git", *args],
            cwd=cwd or self.work,
            env={**os.environ, **AUTHOR},
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    def commit(self, message: str, files: dict[str, str | None], *, push: str = "push") -> str:
        for name, text in files.items():
            path = self.work / name
            if text is None:
                self.run("rm", "--quiet", name)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            self.run("add", name)
        self.run("commit", "--quiet", "-m", message)
        if push == "push":
            self.run("push", "--quiet", "origin", "main")
        elif push == "force":
            self.run("push", "--quiet", "--force", "origin", "main")
        return self.run("rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path)


@pytest.fixture
def clones(tmp_path: Path, settings) -> Path:
    settings.GARDEN_GIT_DIR = str(tmp_path / "clones")
    return tmp_path / "clones"


GARDEN = {
    "Hives/Bramble.md": note("Bramble", 2015),
    "Hives/Clover.md": note("Clover", 2018) + "\n\nSee [[Bramble]].",
    "Orchard.md": "The orchard has 146 trees. The [[Bramble]] hive is at its north end.",
}


def url(repo: Repo) -> str:
    return f"file://{repo.remote}"


def current(path: str) -> ArticleRevision:
    revision = Article.objects.get(path=path).current_revision
    assert revision is not None
    return revision


def live(repo: Repo) -> int:
    """How many of the git garden's articles readers see."""
    tree = GitGarden.of(url(repo), "main").tree.resolve()
    return Article.objects.filter(garden=str(tree), retired_at__isnull=True).count()


def test_the_branch_head_is_imported_and_each_revision_records_its_commit(repo, clones):
    head = repo.commit("Three notes", GARDEN)
    report = git_garden_import(url(repo), "main")
    assert (report.created, report.refused, report.failures) == (3, [], [])
    revision = current("Hives/Bramble")
    assert revision.commit == head
    assert revision.commit_author == "Ada Beekeeper"
    assert revision.commit_time is not None
    sync = Sync.objects.latest()
    assert (sync.folders, sync.commit) == ([url(repo)], head)
    assert clones.is_dir()


def test_a_push_is_synced_by_what_changed_between_the_two_commits(repo, clones):
    first = repo.commit("Three notes", GARDEN)
    git_garden_import(url(repo), "main")
    second = repo.commit("Clover requeened", {"Hives/Clover.md": note("Clover", 2018, colour="blue")})
    report = git_garden_import(url(repo), "main")
    assert (report.created, report.revised, report.unchanged) == (0, 1, 2)
    clover = Article.objects.get(path="Hives/Clover")
    assert current("Hives/Clover").commit == second
    assert clover.revisions.get(superseded=True).commit == first
    assert current("Orchard").commit == first  # unchanged: its commit stays


def test_a_sync_with_no_new_commit_imports_nothing(repo, clones):
    head = repo.commit("Three notes", GARDEN)
    git_garden_import(url(repo), "main")
    report = git_garden_import(url(repo), "main")
    assert (report.created, report.revised, report.refused) == (0, 0, [])
    assert report.notices == [(url(repo), git.UNCHANGED.format(head=head[:12]))]


def test_a_note_git_sees_renamed_keeps_its_article_even_when_edited(repo, clones):
    repo.commit("Three notes", GARDEN)
    git_garden_import(url(repo), "main")
    bramble = Article.objects.get(path="Hives/Bramble")
    repo.run("mv", "Hives/Bramble.md", "Hives/Bramble hive.md")
    edited = GARDEN["Hives/Bramble.md"].replace("eleven frames", "twelve frames")
    repo.commit("Bramble renamed and a frame added", {"Hives/Bramble hive.md": edited})
    report = git_garden_import(url(repo), "main")
    assert (report.moved, report.retired, report.created, report.revised) == (1, 0, 0, 1)
    moved = Article.objects.get(pk=bramble.pk)
    assert moved.path == "Hives/Bramble hive"
    assert moved.retired_at is None
    assert moved.revisions.count() == 2
    assert "twelve frames" in current("Hives/Bramble hive").body


def test_a_deleted_note_is_retired_with_its_history(repo, clones):
    repo.commit("Three notes", GARDEN)
    git_garden_import(url(repo), "main")
    repo.commit("Orchard note gone", {"Orchard.md": None})
    report = git_garden_import(url(repo), "main")
    assert report.retired == 1
    orchard = Article.objects.get(path="Orchard")
    assert orchard.retired_at is not None
    assert orchard.revisions.count() == 1


def test_a_force_push_imports_the_new_head_whole_and_says_so(repo, clones):
    repo.commit("Three notes", GARDEN)
    before = repo.commit("Clover requeened", {"Hives/Clover.md": note("Clover", 2018, colour="blue")})
    git_garden_import(url(repo), "main")
    repo.run("reset", "--quiet", "--hard", "HEAD~1")
    head = repo.commit(
        "Clover requeened green", {"Hives/Clover.md": note("Clover", 2018, colour="green")}, push="force"
    )
    report = git_garden_import(url(repo), "main")
    assert report.refused == []
    assert (url(repo), git.HISTORY_REWRITTEN.format(before=before[:12], head=head[:12])) in report.notices
    assert "marked green" in current("Hives/Clover").body
    assert Sync.objects.latest().commit == head


def test_a_fetch_that_fails_changes_nothing_says_why_and_shows_no_credential(repo, clones, tmp_path):
    repo.commit("Three notes", GARDEN)
    git_garden_import(url(repo), "main")
    secret = "ghp_s3cretTOKENvalue"
    broken = f"https://ada:{secret}@127.0.0.1:9/notes.git"  # nothing listens on port 9
    report = git_garden_import(broken, "main")
    assert len(report.refused) == 1
    message = report.refused[0][1]
    assert "could not be fetched" in message
    assert secret not in message and secret not in str(report.refused)
    sync = Sync.objects.latest()
    assert secret not in sync.refused and secret not in str(sync.folders)
    assert sync.refused == message
    assert live(repo) == 3
    assert not any(secret in str(path) for path in clones.rglob("*"))
    for config in clones.rglob("config"):
        assert secret not in config.read_text()


class AskingForCredentials(http.server.BaseHTTPRequestHandler):
    """A git host that asks for a password and, given one, keeps the `Authorization` it was sent."""

    received: list[str] = []

    def do_GET(self) -> None:
        if (given := self.headers.get("Authorization")) is None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="notes"')
        else:
            self.received.append(given)
            self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_token_reaches_the_host_but_never_a_command_line_or_the_clone(repo, clones, monkeypatch):
    secret = "ghp_s3cretTOKEN/value"
    host = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AskingForCredentials)
    threading.Thread(target=host.serve_forever, daemon=True).start()
    commands: list[list[str]] = []
    run = subprocess.run

    def recorded(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        commands.append(list(args))
        return run(args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("garden.sync.git.subprocess.run", recorded)
    try:
        address = f"http://ada:{quote(secret, safe='')}@127.0.0.1:{host.server_port}/notes.git"
        report = git_garden_import(address, "main")
    finally:
        host.shutdown()
    assert len(report.refused) == 1 and secret not in report.refused[0][1]
    # The host was sent the user and token, decoded as git decodes a URL's...
    assert AskingForCredentials.received == ["Basic " + base64.b64encode(f"ada:{secret}".encode()).decode()]
    # ...while neither is in any git command run, nor in what the clone keeps.
    fetch = next(command for command in commands if "fetch" in command)
    assert f"http://127.0.0.1:{host.server_port}/notes.git" in fetch
    assert not any(secret in arg or "ada" in arg for command in commands for arg in command)
    for config in clones.rglob("config"):
        assert secret not in config.read_text()


def test_a_folder_that_is_not_a_repository_is_refused_and_said(repo, clones, tmp_path):
    (tmp_path / "plain").mkdir()
    report = git_garden_import(f"file://{tmp_path / 'plain'}", "main")
    ((_, message),) = report.refused
    assert "could not be fetched" in message
    assert "not appear to be a git repository" in message or "not a git repository" in message
    assert Sync.objects.latest().refused == message


def test_a_branch_that_is_not_there_is_refused(repo, clones):
    repo.commit("Three notes", GARDEN)
    report = git_garden_import(url(repo), "drafts")
    ((_, message),) = report.refused
    assert "branch drafts" in message and "could not be fetched" in message


def test_a_commit_that_removes_most_of_the_garden_is_refused_until_a_later_commit(repo, clones):
    first = repo.commit("Three notes", GARDEN)
    git_garden_import(url(repo), "main")
    repo.commit("Oops", {"Hives/Bramble.md": None, "Hives/Clover.md": None})
    report = git_garden_import(url(repo), "main")
    ((_, message),) = report.refused
    assert MASS_RETIRE.format(missing=2, count=3) in message
    assert live(repo) == 3
    sync = Sync.objects.latest()
    assert (sync.refused, sync.commit) == (message, "")
    assert git.last_imported(GitGarden.of(url(repo), "main")) == first
    again = git_garden_import(url(repo), "main")  # refused again: the commit was never imported
    assert again.refused
    repo.commit(
        "Restored",
        {"Hives/Bramble.md": GARDEN["Hives/Bramble.md"], "Hives/Clover.md": GARDEN["Hives/Clover.md"]},
    )
    assert git_garden_import(url(repo), "main").refused == []


def test_credentials_are_scrubbed_from_any_text():
    token_url = "https://x-access-token:ghp_abcdef123456@github.com/me/notes.git"
    text = f"fatal: unable to access '{token_url}/': The requested URL returned error: 403 (ghp_abcdef123456)"
    clean = scrubbed(text, token_url)
    assert "ghp_abcdef123456" not in clean and "x-access-token" not in clean
    assert "https://***@github.com/me/notes.git" in clean
    assert scrubbed("https://tok3nvalue@host/repo", "https://tok3nvalue@host/repo") == "https://***@host/repo"


def test_the_command_imports_a_git_garden_and_refuses_a_broken_url_without_its_token(repo, clones, capsys):
    repo.commit("Three notes", GARDEN)
    call_command("import_garden", git=url(repo), branch="main", no_progress=True)
    assert "Imported 3 new" in capsys.readouterr().out
    with pytest.raises(CommandError) as refused:
        call_command("import_garden", git="https://me:tok3nSECRET@127.0.0.1:9/x.git", no_progress=True)
    assert refused.value.returncode == EXIT_REFUSED
    assert "could not be fetched" in str(refused.value) and "tok3nSECRET" not in str(refused.value)
    assert "tok3nSECRET" not in capsys.readouterr().err


def test_watching_a_git_garden_fetches_each_interval_and_syncs_a_push(repo, clones):
    repo.commit("Three notes", GARDEN)
    git_garden_import(url(repo), "main")
    repo.commit("Clover requeened", {"Hives/Clover.md": note("Clover", 2018, colour="blue")})
    reports: list[ImportReport] = []
    stop = threading.Event()

    def on_report(report):
        reports.append(report)
        if len(reports) == 2:
            stop.set()

    git_garden_watch(url(repo), "main", on_report, every=0.01, stop=stop)
    assert [r.revised for r in reports] == [1, 0]
    assert "marked blue" in current("Hives/Clover").body


def test_the_scheduled_sync_syncs_the_configured_git_garden(repo, clones, settings):
    head = repo.commit("Three notes", GARDEN)
    settings.GARDEN_PATH, settings.GARDEN_GIT_URL, settings.GARDEN_GIT_BRANCH = "", url(repo), "main"
    report = garden_sync_configured()
    assert report is not None and report.created == 3
    assert Sync.objects.latest().commit == head


def test_an_article_page_shows_its_commit_and_links_to_it_when_a_web_address_is_set(
    repo, clones, client, settings
):
    head = repo.commit("Three notes", GARDEN)
    git_garden_import(url(repo), "main")
    bramble = Article.objects.get(path="Hives/Bramble")
    html = page_text(client.get(bramble.get_absolute_url()).content.decode())
    assert f"From commit <code>{head[:12]}</code> by Ada Beekeeper" in html
    settings.GARDEN_GIT_WEB_URL = "https://git.example.org/notes/src/{commit}/{path}"
    html = client.get(bramble.get_absolute_url()).content.decode()
    assert f'href="https://git.example.org/notes/src/{head}/Hives/Bramble.md"' in html


def test_a_verdict_shows_the_commit_its_source_came_from(client):
    verification = verification_with_claims(1)
    claim = verification.claims.get()
    assert claim.passage is not None
    ArticleRevision.objects.filter(pk=claim.passage.revision_id).update(
        commit="0123456789abcdef" * 2 + "01234567"
    )
    html = page_text(client.get(verification.answer.get_absolute_url()).content.decode())
    assert "· commit <code>0123456789ab</code>" in html


def test_a_failed_fetch_is_on_the_logs_page_and_api_health_without_its_token(repo, clones):
    repo.commit("Three notes", GARDEN)
    git_garden_import(url(repo), "main")
    secret = "glpat-S3cretTokenValue"
    report = git_garden_import(f"https://oauth2:{secret}@127.0.0.1:9/notes.git", "main")
    ((_, message),) = report.refused
    refusal_shown(message)
    operator = Client()
    operator.force_login(User.objects.get(username="operator"))  # made by refusal_shown
    for page in ("/api/health", "/operators/logs/"):
        assert secret not in operator.get(page).content.decode()


def test_a_mass_deletion_commit_is_on_the_logs_page_and_api_health(repo, clones):
    repo.commit("Three notes", GARDEN)
    git_garden_import(url(repo), "main")
    repo.commit("Oops", {"Hives/Bramble.md": None, "Hives/Clover.md": None})
    ((_, message),) = git_garden_import(url(repo), "main").refused
    refusal_shown(message)


def test_git_alone_imports_the_configured_repository(repo, clones, settings, capsys):
    repo.commit("Three notes", GARDEN)
    settings.GARDEN_GIT_URL, settings.GARDEN_GIT_BRANCH = url(repo), "main"
    call_command("import_garden", "--git", "--no-progress")
    assert "Imported 3 new" in capsys.readouterr().out
    settings.GARDEN_GIT_URL = ""
    with pytest.raises(CommandError, match="GARDEN_GIT_URL, which is not set"):
        call_command("import_garden", "--git", "--no-progress")


def test_a_revision_records_the_last_commit_that_changed_its_note_not_only_the_head(repo, clones):
    first = repo.commit("Three notes", GARDEN)
    head = repo.commit("Clover requeened", {"Hives/Clover.md": note("Clover", 2018, colour="blue")})
    git_garden_import(url(repo), "main")
    assert current("Hives/Bramble").commit == first
    assert current("Hives/Clover").commit == head
