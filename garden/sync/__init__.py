"""Syncing a garden into the database: `import_garden`, `--watch` and the scheduled sync of GARDEN_PATH.

`importing` drives a sync, step by step; `reading` reads its notes; `groups` writes the changed ones a group
at a time; `report` says what it did and keeps its record; `writing` stores notes; `linking` resolves its links (by `links`, pure: what a
written link names); `topic_names` keeps a derived topic's names to what its live notes give it; `embedding`
reuses or encodes its vectors; `reembedding` embeds again the passages another backend made; `fanout` has the Celery
workers encode them (`--workers`); `lifecycle` follows notes that move, leave or come back; `watching` keeps a
garden in sync.
"""

from garden.sync.fanout import FanOutError, Workers, workers_find
from garden.sync.groups import GROUP_PASSAGES
from garden.sync.importing import ImportStopped, garden_import
from garden.sync.report import ImportReport
from garden.sync.watching import SYNC_LOCK, garden_sync_configured, garden_watch
from garden.sync.writing import vocabulary_apply

__all__ = [
    "GROUP_PASSAGES",
    "SYNC_LOCK",
    "FanOutError",
    "ImportReport",
    "ImportStopped",
    "Workers",
    "garden_import",
    "garden_sync_configured",
    "garden_watch",
    "vocabulary_apply",
    "workers_find",
]
