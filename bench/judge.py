"""The local judge: claims per second, and verifying a six-claim answer against eight passages."""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from claimcheck.claims import split_claims
from claimcheck.judges.local import judge_claims
from claimcheck.judges.types import Source
from claimcheck.terms import JudgeMode
from garden.models import Passage
from verifier.checking import text_check
from verifier.models import SpendPurpose

SIX_CLAIMS = 6
EIGHT_CHUNKS = 8


def _answer(passages: list[Passage], rng: random.Random) -> str:
    """Six cited sentences taken from the passages, every other one with a number changed."""
    sentences = [
        (number, claim.text)
        for number, passage in enumerate(passages, start=1)
        for claim in split_claims(passage.text)
        if claim.is_claim and len(claim.text) > 40 and not claim.text.startswith(("#", "|", "-"))
    ]
    picked = rng.sample(sentences, SIX_CLAIMS)
    parts = []
    for i, (number, sentence) in enumerate(picked):
        body = sentence.rstrip(".")
        if i % 2:
            body = "".join(str((int(c) + 3) % 10) if c.isdigit() else c for c in body)
        parts.append(f"{body} [{number}].")
    return " ".join(parts)


def bench_judge(runs: int, seed: int = 11) -> dict[str, Any]:
    rng = random.Random(seed)
    pool = list(Passage.objects.filter(is_current=True, end__gt=300).order_by("id")[:200])
    cases = []
    for _ in range(max(runs, 3) * 4):
        passages = rng.sample(pool, EIGHT_CHUNKS)
        cases.append((_answer(passages, rng), [Source(i, c.text) for i, c in enumerate(passages, start=1)]))
    # Load the models once, outside the timings.
    text_check(*cases[0], purpose=SpendPurpose.BATCH, mode=JudgeMode.LOCAL)
    timings, cpu_timings = [], []
    for text, sources in cases:
        began, cpu_began = time.perf_counter(), time.process_time()
        text_check(text, sources, purpose=SpendPurpose.BATCH, mode=JudgeMode.LOCAL)
        timings.append((time.perf_counter() - began) * 1000)
        cpu_timings.append((time.process_time() - cpu_began) * 1000)
    claims = [c for text, _ in cases for c in split_claims(text) if c.is_claim]
    batches = [(split_claims(text), sources) for text, sources in cases]
    began = time.perf_counter()
    for claim_list, sources in batches:
        judge_claims(claim_list, sources)
    seconds = time.perf_counter() - began
    return {
        "answers": len(cases),
        "six_claims_eight_passages_median_ms": round(statistics.median(timings), 1),
        "six_claims_eight_passages_p95_ms": round(sorted(timings)[int(0.95 * (len(timings) - 1))], 1),
        # The CPU time of this process (all its threads): what a neighbour's load leaves unchanged.
        "six_claims_eight_passages_median_cpu_ms": round(statistics.median(cpu_timings), 1),
        "local_judge_claims_per_second": round(len(claims) / seconds, 1),
    }
