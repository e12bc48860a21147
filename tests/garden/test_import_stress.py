"""Importing a large generated garden: throughput, files broken halfway, and interruption mid-import."""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Count, Q

from config.database import current_database_url
from garden.models import Article

pytestmark = pytest.mark.slow

BASE_DIR = Path(__file__).resolve().parent.parent.parent
WORDS = [
    "signal",
    "lever",
    "boiler",
    "tender",
    "carriage",
    "platform",
    "viaduct",
    "tunnel",
    "gradient",
    "siding",
    "coupling",
    "firebox",
    "valve",
    "whistle",
    "tablet",
    "token",
    "crossing",
    "ballast",
    "sleeper",
    "rail",
    "shed",
    "turntable",
    "water",
    "column",
    "coal",
    "bunker",
]


def generate_garden(folder: Path, count: int, seed: int = 5) -> Path:
    """`count` small articles with distinct, checkable text, made fresh for each test run."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    for number in range(count):
        words = " ".join(rng.choice(WORDS) for _ in range(30))
        (folder / f"generated-{number:04d}.md").write_text(
            f"---\ntitle: Generated article {number}\ntopics: [generated]\ndate: 2025-01-{1 + number % 28:02d}\n---\n"
            f"Item {number} was recorded in {1900 + number % 120} at milepost {number % 97}. {words}.\n"
        )
    return folder


# Transactional, so the 2,000 rows are truncated afterwards rather than left as dead entries in the HNSW
# index that later tests search.
@pytest.mark.django_db(transaction=True)
def test_two_thousand_articles_import_and_broken_files_are_reported(tmp_path, capsys):
    folder = generate_garden(tmp_path / "big", 2000)
    good = "---\ntitle: Broken later\n---\nThe first half is fine. "
    (folder / "broken-encoding.md").write_bytes(good.encode() + b"then \xff\xfe bytes that are not UTF-8.\n")
    (folder / "broken-front-matter.md").write_text(
        "---\ntitle: Half\ntopics: [a, b\ndate: 2025-01-01\n---\nBody.\n"
    )

    with pytest.raises(CommandError, match="2 file"):
        call_command("import_garden", str(folder), "--no-progress")
    out, err = capsys.readouterr()
    assert "Imported 2000 new" in out and "passages/s" in out
    assert (
        "broken-encoding.md: not valid UTF-8" in err
        and "broken-front-matter.md: front matter is not valid YAML" in err
    )
    assert Article.objects.filter(slug__startswith="generated-").count() == 2000


@pytest.mark.django_db(transaction=True)
def test_an_interrupted_import_leaves_no_half_written_article(tmp_path):
    folder = generate_garden(tmp_path / "interrupted", 600, seed=9)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": current_database_url(),
    }
    process = subprocess.Popen(
        [sys.executable, "manage.py", "import_garden", str(folder), "--no-progress"],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 240
    while Article.objects.filter(slug__startswith="generated-").count() < 20:
        assert process.poll() is None, "the import finished before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(30)

    written = Article.objects.filter(slug__startswith="generated-").annotate(
        current_revisions=Count("revisions", filter=Q(revisions__superseded=False), distinct=True),
        current_passages=Count("passages", filter=Q(passages__is_current=True), distinct=True),
    )
    assert 20 <= written.count() < 600
    counts = written.values_list("current_revisions", "current_passages")
    assert all(revisions == 1 and passages >= 1 for revisions, passages in counts)
