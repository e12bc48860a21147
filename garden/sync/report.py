"""What an import did (`ImportReport`), and the record of each sync that operators read (`Sync`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from garden.models import Sync
from garden.skips import SkipKind, skipped_words

SKIPPED_SUMMARY = "Skipped {total}: {counts}."
SYNCS_KEPT = 200


@dataclass
class ImportReport:
    created: int = 0
    revised: int = 0
    unchanged: int = 0
    passages: int = 0
    embed_seconds: float = 0.0  # spent encoding, summed over groups (on workers, over their processes)
    write_seconds: float = 0.0  # spent writing groups to the database
    seconds: float = 0.0
    embedded: int = 0  # passages embedded (an edit reuses the vectors of the passages it left alone)
    reembedded: int = 0  # current passages of unchanged notes embedded again: another embedder had made them
    moved: int = 0  # notes moved or renamed, which kept their article
    retired: int = 0  # notes gone from the garden
    private: int = 0  # notes left out by a marker (`private: true`, `publish: false`, `public:: false`)
    private_places: int = 0  # notes (and PDFs) in private places: never read
    # Files left out on purpose by a rule of the garden, other than private ones: (path, kind, reason).
    skipped: list[tuple[str, SkipKind, str]] = field(default_factory=list)
    withheld: int = 0  # articles newly withheld from readers: their note turned private or unreadable
    red_links: int = 0  # links, across the garden, to notes it does not have
    failures: list[tuple[str, str]] = field(default_factory=list)
    notices: list[tuple[str, str]] = field(
        default_factory=list
    )  # files read but not imported as such, and why
    refused: list[tuple[str, str]] = field(default_factory=list)  # folders left as they were, and why
    sync_id: int | None = None  # the `Sync` row that records it

    @property
    def passages_per_second(self) -> float:
        return self.passages / self.seconds if self.seconds else 0.0

    @property
    def skipped_kinds(self) -> Counter[SkipKind]:
        """How many files were left out on purpose, by kind, private ones included."""
        kinds = Counter(kind for _, kind, _ in self.skipped)
        kinds[SkipKind.PRIVATE] += self.private_places
        kinds[SkipKind.MARKED_PRIVATE] += self.private
        return +kinds

    @property
    def skipped_summary(self) -> str:
        """ "Skipped 12: 6 in private places, 2 marked private, 3 links outside the garden, 1 scanned PDF",
        or "" when none was."""
        kinds = self.skipped_kinds
        if not kinds:
            return ""
        return SKIPPED_SUMMARY.format(total=kinds.total(), counts=skipped_words(kinds.items()))


def sync_record(folders: Sequence[Path], report: ImportReport) -> Sync:
    """Keep what this sync did, refused and could not import, for the logs page and `/api/health`; the
    last SYNCS_KEPT are kept (a watched or scheduled garden syncs hundreds of times a day)."""
    sync = Sync.objects.create(
        folders=[str(folder) for folder in folders],
        refused="\n".join(message for _, message in report.refused),
        failures=[list(failure) for failure in report.failures],
        counts={
            "created": report.created,
            "revised": report.revised,
            "unchanged": report.unchanged,
            "moved": report.moved,
            "retired": report.retired,
            "withheld": report.withheld,
            "private": report.private,
            "skipped": dict(report.skipped_kinds),
        },
    )
    Sync.objects.filter(pk__in=Sync.objects.values("pk")[SYNCS_KEPT:]).delete()
    return sync
