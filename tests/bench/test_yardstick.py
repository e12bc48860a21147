"""Every timed figure of a report in units of the yardstick it depends on; the yardsticks themselves measured."""

from __future__ import annotations

from typing import Any

from bench.yardstick import (
    PASSAGES,
    SectionYardsticks,
    Yardstick,
    cpu_loop_seconds,
    ratios,
    yardstick_for,
    yardstick_measure,
)


def _report() -> dict[str, Any]:
    return {
        "runs": 1,
        "yardstick": {"cpu_loop_seconds": 0.1, "encoder_seconds": 0.5, "round_trip_ms": 0.4},
        "import": {"articles": 50, "passages": 354, "seconds": 6.0, "passages_per_second": 59.0},
        "retrieval": {
            "sizes": [
                {
                    "passages": 1000,
                    "fill_seconds": 3.0,
                    "hnsw_recall_at_10": 1.0,
                    "hybrid_retrieval": {"p50_ms": 8.0, "p95_ms": 12.0},
                    "numpy_exact_scan": {"p50_ms": 0.1, "p95_ms": 0.2},
                }
            ]
        },
        "judge": {
            "answers": 12,
            "six_claims_eight_passages_median_ms": 250.0,
            "local_judge_claims_per_second": 50.0,
        },
    }


def test_each_timed_figure_is_divided_by_the_yardstick_it_depends_on() -> None:
    found = ratios(_report())
    # An import in encoder runs, a retrieval in round trips, a judgement in CPU loops.
    assert found["import.seconds"] == {"value": 6.0, "per": "encoder", "ratio": 12.0}
    assert found["retrieval.sizes.0.hybrid_retrieval.p50_ms"] == {
        "value": 8.0,
        "per": "round_trip",
        "ratio": 20.0,
    }
    assert found["retrieval.sizes.0.numpy_exact_scan.p50_ms"]["ratio"] == 0.001
    assert found["judge.six_claims_eight_passages_median_ms"] == {"value": 250.0, "per": "cpu", "ratio": 2.5}
    # A throughput is what one yardstick's time does: 59 passages/s is 29.5 passages an encoder run.
    assert found["import.passages_per_second"]["ratio"] == 29.5
    assert found["judge.local_judge_claims_per_second"]["ratio"] == 5.0


def test_counts_shares_and_untabled_timings_get_no_ratio() -> None:
    found = ratios(_report())
    assert "import.passages" not in found
    assert "retrieval.sizes.0.hnsw_recall_at_10" not in found
    assert "retrieval.sizes.0.fill_seconds" not in found  # how warm the cache was, not how fast the code is
    assert not any(path.startswith(("yardstick", "runs")) for path in found)
    assert len(found) == 8


def test_wildcards_stand_for_one_key_or_position() -> None:
    assert yardstick_for("notes.sizes.1.refusal_decision.p50_ms") is Yardstick.ROUND_TRIP
    assert yardstick_for("embedding_backends.onnx-int8.query_embedding.p95_ms") is Yardstick.ENCODER
    assert yardstick_for("hnsw.indexes.0.ef_search.3.p50_ms") is Yardstick.ROUND_TRIP
    assert yardstick_for("notes.sizes.1.settings.refused_out_of_scope") is None


def test_the_yardstick_section_names_the_machine() -> None:
    section = yardstick_measure(cpu=lambda: 0.1, encoder=lambda: 0.5, round_trip=lambda: 0.25)
    assert section["encoder_passages"] == len(PASSAGES) == len(set(PASSAGES)) == 64
    assert section["encoder_passages_per_second"] == 128.0
    assert section["round_trip_ms"] == 0.25
    assert {"platform", "cpus", "python", "load_average"} <= set(section["machine"])


def test_the_cpu_loop_takes_a_measurable_time() -> None:
    assert 0.005 < cpu_loop_seconds() < 5


def test_a_section_is_divided_by_the_yardsticks_measured_beside_it() -> None:
    # A neighbour made the machine twice as slow for the judge's section only: its yardsticks beside it say so,
    # and the judge's ratio is what it would have been on the quiet machine; the import's is untouched.
    quiet = {
        "cpu_loop_seconds": 0.1,
        "cpu_loop_cpu_seconds": 0.1,
        "encoder_seconds": 0.5,
        "round_trip_ms": 0.4,
    }
    busy = {**quiet, "cpu_loop_seconds": 0.2}
    marks = iter([quiet, busy, busy])
    beside = SectionYardsticks(quiet, measure=lambda: next(marks))
    with beside.section("import"):
        pass
    with beside.section("notes"):  # the neighbour starts
        pass
    with beside.section("judge"):
        pass
    report = _report()
    report["judge"]["six_claims_eight_passages_median_ms"] = 500.0  # twice as long, on the busy machine
    report["yardstick"]["beside"] = beside.beside
    assert beside.beside["judge"]["cpu_loop_seconds"] == 0.2
    found = ratios(report)
    assert found["judge.six_claims_eight_passages_median_ms"]["ratio"] == 2.5
    assert found["import.seconds"]["ratio"] == 12.0
    # The CPU-time figures are divided by the loop's CPU time.
    assert yardstick_for("verify_all.one_worker.cpu_seconds") is Yardstick.CPU_TIME
    assert yardstick_for("judge.six_claims_eight_passages_median_cpu_ms") is Yardstick.CPU_TIME
