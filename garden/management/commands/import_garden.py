"""`python manage.py import_garden [--history FOLDER] PATH [PATH ...] [--workers]`: import folders of Markdown notes
and PDFs, in order; `import_garden --git URL [--branch B]`: a git repository's branch (`garden.sync.git`).

Its exit status: 0 when every note was imported or left out on purpose (private, a link the garden's rules do not
follow, a scanned PDF...: counted by kind in the summary); EXIT_FAILED when a note that should have been imported
could not be (or the import stopped); EXIT_REFUSED when a garden was refused as an accident and left as it was.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from garden.sync import (
    FanOutError,
    ImportReport,
    ImportStopped,
    Workers,
    garden_import,
    garden_watch,
    workers_find,
)
from garden.sync.git import garden_label, git_garden_import, git_garden_watch
from providers import embeddings

EXIT_FAILED = 1
EXIT_REFUSED = 3  # not 2, which is a command line the parser could not read
FIRST_SYNC_FAILED = "The first sync failed (see above)."
FILES_FAILED = "{count} file(s) could not be imported; the others were."
NO_GIT_URL = "--git without a URL imports GARDEN_GIT_URL, which is not set."
GIT_OR_PATHS = "Give folders to import, or --git URL, not both."
WATCHING_GIT = "Fetching {url} (branch {branch}) every {every:.0f}s (Ctrl-C stops)."
WATCHING_AFTER_FAILURE = "The first sync failed ({error}); watching anyway: the next change syncs again."


class Command(BaseCommand):
    help = (
        "Import gardens of Markdown notes and PDFs (an Obsidian vault, a docs/ tree, a folder), in order; a "
        "changed note gets a new revision. Exits 0 when every note was imported or left out on purpose, "
        f"{EXIT_FAILED} when a note could not be imported, {EXIT_REFUSED} when a garden was refused."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "paths", nargs="*", type=Path, help="Folders (or single .md or .pdf files), imported in order."
        )
        parser.add_argument(
            "--git",
            metavar="URL",
            nargs="?",
            const="",
            default=None,
            help="A git repository as the garden: its branch's head is imported, and each later import (or "
            "--watch) fetches and imports what changed. A token may be in the URL; it is never shown. "
            "--git alone imports GARDEN_GIT_URL (which keeps a token out of the process list).",
        )
        parser.add_argument(
            "--branch", default="", help="With --git: the branch to import (default GARDEN_GIT_BRANCH, main)."
        )
        parser.add_argument(
            "--interval",
            type=float,
            default=None,
            metavar="SECONDS",
            help="With --git --watch: how often to fetch (default GARDEN_SYNC_EVERY_SECONDS).",
        )
        parser.add_argument(
            "--history",
            action="append",
            type=Path,
            default=[],
            metavar="FOLDER",
            help="An older copy of the garden, imported before PATH: its texts become earlier revisions, and a "
            "text imported before is left as it is, so it never turns the clock back (the sample's earlier/). "
            "Without it, the folder is the truth: a note whose text went back to an earlier one shows it again.",
        )
        parser.add_argument("--no-progress", action="store_true", help="Do not draw a progress bar.")
        parser.add_argument(
            "--watch",
            action="store_true",
            help="After the import, keep syncing as notes change (Ctrl-C stops); those syncs embed here.",
        )
        parser.add_argument(
            "--workers",
            action="store_true",
            help="Have the Celery workers embed the passages, a batch per task; this process reads and writes.",
        )
        parser.add_argument(
            "--allow-mass-retire",
            action="store_true",
            help="Retire the notes gone from a garden even when the folder is empty or missing, or more than "
            "half of the garden would go at once (which is refused otherwise, as an accident).",
        )
        parser.add_argument(
            "--batch-timeout",
            type=float,
            default=None,
            metavar="SECONDS",
            help="With --workers: stop when a batch has not come back after this long (default: the "
            "visibility timeout plus the task time limit, so a batch whose worker died can be redone).",
        )

    def handle(
        self,
        *args: Any,
        paths: list[Path],
        no_progress: bool,
        watch: bool,
        workers: bool,
        batch_timeout: float | None,
        allow_mass_retire: bool,
        history: list[Path],
        git: str | None = None,
        branch: str = "",
        interval: float | None = None,
        **options: Any,
    ) -> None:
        if git == "":
            git = settings.GARDEN_GIT_URL
            if not git:
                raise CommandError(NO_GIT_URL)
        if bool(git) == bool(paths):
            raise CommandError(GIT_OR_PATHS)
        pool: Workers | None = None
        if workers:
            try:
                pool = workers_find()
            except FanOutError as error:
                raise CommandError(str(error)) from None
            self.stdout.write(
                f"Embedding on {len(pool.names)} Celery worker(s), {pool.processes} process(es): "
                f"{', '.join(pool.names)}."
            )
        bar: tqdm[Any] | None = None

        def start(total: int) -> None:
            nonlocal bar
            if bar is not None:
                bar.close()
            bar = tqdm(
                total=total,
                unit="passage",
                desc="Embedding",
                disable=no_progress or total == 0,
                file=sys.stderr,
            )

        def advance(count: int) -> None:
            if bar is not None:
                bar.update(count)

        report: ImportReport | None = None
        try:
            if git:
                report = git_garden_import(
                    git,
                    branch,
                    on_start=start,
                    on_progress=advance,
                    workers=pool,
                    batch_timeout=batch_timeout,
                    allow_mass_retire=allow_mass_retire,
                )
            else:
                report = garden_import(
                    [*history, *paths],
                    history=history,
                    on_start=start,
                    on_progress=advance,
                    workers=pool,
                    batch_timeout=batch_timeout,
                    allow_mass_retire=allow_mass_retire,
                )
        except ImportStopped as stopped:
            if bar is not None:
                bar.close()
            self.report(stopped.report)
            if not watch:
                raise CommandError(str(stopped)) from None
            self.stderr.write(WATCHING_AFTER_FAILURE.format(error=stopped))
        except Exception as error:  # with --watch, a failed first sync is told and the watch still starts
            if not watch:
                raise
            self.stderr.write(WATCHING_AFTER_FAILURE.format(error=f"{type(error).__name__}: {error}"))
        if bar is not None:
            bar.close()
        if report is not None:
            self.report(report)
        if watch and git:
            every = interval if interval is not None else settings.GARDEN_SYNC_EVERY_SECONDS
            branch = branch or settings.GARDEN_GIT_BRANCH
            self.stdout.write(WATCHING_GIT.format(url=garden_label(git), branch=branch, every=every))
            try:
                git_garden_watch(git, branch, self.report, every=every)
            except KeyboardInterrupt:
                return
        elif watch:
            self.stdout.write(f"Watching {', '.join(map(str, paths))} for changes (Ctrl-C stops).")
            try:
                garden_watch(paths, self.report)
            except KeyboardInterrupt:
                return
        if report is None:  # with --watch, the first sync raised (told above); the watch has ended since
            raise CommandError(FIRST_SYNC_FAILED)
        if report.refused:
            message = " ".join(message for _, message in report.refused)
            raise CommandError(message, returncode=EXIT_REFUSED)
        for name, reason in report.failures:
            if Path(name) in paths:  # a whole garden, not one of its notes
                raise CommandError(f"{name}: {reason}", returncode=EXIT_FAILED)
        if report.failures:
            raise CommandError(FILES_FAILED.format(count=len(report.failures)), returncode=EXIT_FAILED)

    def report(self, report: ImportReport) -> None:
        self.stdout.write(
            f"Imported {report.created} new and {report.revised} revised articles, {report.unchanged} unchanged; "
            f"{report.passages} passages in {report.seconds:.1f}s ({report.passages_per_second:.1f} passages/s)."
        )
        if report.embedded != report.passages:
            self.stdout.write(f"Embedded {report.embedded} of those passages; the others were unchanged.")
        if report.reembedded:
            self.stdout.write(
                f"Embedded {report.reembedded} passages of unchanged notes again: another embedding backend "
                f"had made them (the configured one is {embeddings.embedder()})."
            )
        if report.moved:
            self.stdout.write(f"Followed {report.moved} moved or renamed note(s), which keep their history.")
        if report.retired:
            self.stdout.write(
                f"Retired {report.retired} note(s) gone from the garden; their history is kept."
            )
        if report.skipped_summary:
            self.stdout.write(report.skipped_summary)
        for name, _, reason in report.skipped:
            self.stdout.write(f"Skipped {name}: {reason}")
        if report.withheld:
            self.stdout.write(
                f"Withheld {report.withheld} article(s) from readers: their notes turned private or cannot be "
                "read; they are back once public and readable again."
            )
        if report.red_links:
            self.stdout.write(
                f"{report.red_links} link(s) point to notes that are not in the garden (red links)."
            )
        for name, reason in report.notices:
            self.stdout.write(f"NOTE {name}: {reason}")
        for name, reason in report.failures:
            self.stderr.write(f"FAILED {name}: {reason}")
        for name, reason in report.refused:
            self.stderr.write(f"REFUSED {name}: {reason}")
