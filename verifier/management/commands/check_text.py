"""`python manage.py check_text --jsonl IN [--out OUT] [--judge local|claude|cascade]`: the judge alone.

Each input line is `{"id", "source": str or [str], "text"}`; each output line is `{"id", "verdict",
"risk_score", "delta_score", "supported", "claims": [{"text", "status", "quote", "source_index",
"confidence", "flags"}]}`. An item is *supported* when none of its claims is unverified, misattributed or
contradicted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from claimcheck.judges.types import Source
from claimcheck.terms import NOT_SUPPORTED, JudgeMode
from garden.storable import storable
from verifier.checking import text_check
from verifier.models import SpendPurpose

TEXT_TOO_LONG = "line {number}: skipped, the text is limited to {limit:,} characters; this has {length:,}."


class Command(BaseCommand):
    help = "Judge texts against their own sources (JSONL in, JSONL out), for benchmarks."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--jsonl", type=Path, required=True, help="Input JSONL file.")
        parser.add_argument("--out", type=Path, help="Output JSONL file (default: standard output).")
        parser.add_argument("--judge", type=JudgeMode, choices=list(JudgeMode), default=JudgeMode.LOCAL)

    def handle(self, *args: Any, jsonl: Path, out: Path | None, judge: JudgeMode, **options: Any) -> None:
        if not jsonl.is_file():
            raise CommandError(f"{jsonl}: no such file")
        target: TextIO = out.open("w", encoding="utf-8") if out else sys.stdout
        failures = 0
        try:
            with jsonl.open(encoding="utf-8") as lines:
                for number, line in enumerate(lines, start=1):
                    if not line.strip():
                        continue
                    try:
                        item = json.loads(line)
                        sources = item["source"] if isinstance(item["source"], list) else [item["source"]]
                        sources = [storable(str(source)) for source in sources]
                        text = str(item["text"])
                    except (json.JSONDecodeError, KeyError, TypeError) as error:
                        failures += 1
                        self.stderr.write(
                            f"line {number}: skipped, not an item with id/source/text ({error})"
                        )
                        continue
                    if len(text) > settings.CHECK_MAX_CHARS:
                        failures += 1
                        limit = settings.CHECK_MAX_CHARS
                        self.stderr.write(TEXT_TOO_LONG.format(number=number, limit=limit, length=len(text)))
                        continue
                    text = storable(text)
                    target.write(json.dumps(_judged(item.get("id", number), text, sources, judge)) + "\n")
        finally:
            if out:
                target.close()
        if failures:
            raise CommandError(f"{failures} line(s) could not be read; the others were judged.")


def _judged(item_id: object, text: str, sources: list[str], judge: JudgeMode) -> dict[str, Any]:
    checked = text_check(
        text,
        [Source(index=i, text=str(s)) for i, s in enumerate(sources, start=1)],
        purpose=SpendPurpose.BATCH,
        mode=judge,
    )
    finals = checked.outcome.finals
    return {
        "id": item_id,
        "verdict": checked.scored.verdict,
        "risk_score": checked.scored.risk_score,
        "risk_label": checked.scored.risk_label,
        "delta_score": checked.scored.delta_score,
        "supported": bool(finals) and not any(v.status in NOT_SUPPORTED for v in finals),
        "claims": [
            {
                "text": c.text,
                "status": v.status,
                "quote": v.quote,
                "source_index": v.source_index,
                "confidence": round(v.confidence, 4),
                "flags": list(v.flags),
            }
            for c, v in zip([c for c in checked.claims if c.is_claim], finals, strict=True)
        ],
    }
