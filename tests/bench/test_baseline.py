"""The stored baseline catches a slower code path, in yardstick units, and lets a shared machine's wobble pass;
a missing, unreadable or mismatched baseline says so plainly."""

from __future__ import annotations

import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from bench import cli
from bench.baseline import (
    BASELINE_MISSING,
    DEFAULT_MARGIN,
    BaselineError,
    against_baseline,
    baseline_load,
    regressions,
)
from bench.yardstick import BESIDE_CPU_REPEATS, SectionYardsticks, cpu_loop_cpu_seconds, ratios

YARDSTICK = {"cpu_loop_seconds": 0.1, "encoder_seconds": 0.5, "round_trip_ms": 0.4, "machine": {"cpus": 2}}
OPTIONS = {"runs": 1, "sizes": [1000], "notes": [50, 500], "backends": ["onnx-int8"]}


def _report(slower: float = 1.0, yardstick: dict[str, Any] = YARDSTICK) -> dict[str, Any]:
    """A report whose code takes `slower` times as long as the baseline's, on the same machine."""
    report = {
        "yardstick": yardstick,
        "import": {"seconds": 6.0 * slower, "passages_per_second": round(59.0 / slower, 2)},
        "retrieval": {"sizes": [{"hybrid_retrieval": {"p50_ms": 8.0 * slower, "p95_ms": 12.0}}]},
        "judge": {"six_claims_eight_passages_median_ms": 250.0},
    }
    report["ratios"] = ratios(report)
    return report


def _baseline(report: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"options": OPTIONS, "ratios": (report or _report())["ratios"]}


def test_a_2x_slowdown_is_caught_and_a_1_2x_wobble_is_not() -> None:
    compared = against_baseline(_report(slower=2.0), _baseline(), OPTIONS)
    assert compared["import.seconds"] == {"baseline": 12.0, "now": 24.0, "change": 2.0, "slower": 2.0}
    assert set(regressions(compared, DEFAULT_MARGIN)) == {
        "import.seconds",
        "import.passages_per_second",
        "retrieval.sizes.0.hybrid_retrieval.p50_ms",
    }
    assert regressions(against_baseline(_report(slower=1.2), _baseline(), OPTIONS), DEFAULT_MARGIN) == {}


def test_a_throughput_halved_is_slower_and_doubled_is_not() -> None:
    halved = against_baseline(_report(slower=2.0), _baseline(), OPTIONS)["import.passages_per_second"]
    assert halved["change"] == pytest.approx(0.5, abs=0.01)  # ratios keep three significant digits
    assert halved["slower"] == pytest.approx(2.0, abs=0.01)
    assert regressions(against_baseline(_report(slower=0.5), _baseline(), OPTIONS), DEFAULT_MARGIN) == {}


def test_a_slower_machine_is_not_slower_code() -> None:
    # Everything twice as slow, the yardsticks too: the ratios stay where they were.
    machine = {**YARDSTICK, "cpu_loop_seconds": 0.2, "encoder_seconds": 1.0, "round_trip_ms": 0.8}
    compared = against_baseline(_report(slower=2.0, yardstick=machine), _baseline(), OPTIONS)
    assert regressions(compared, DEFAULT_MARGIN) == {}
    assert compared["import.seconds"]["change"] == 1.0


def test_a_figure_the_baseline_does_not_hold_is_neither_compared_nor_checked() -> None:
    # A section that gained a figure since the baseline was written (the Logseq import's encode alone): the
    # run still passes against the old baseline, and the new figure has its ratio for the next one.
    grown = _report()
    grown["logseq_import"] = {"logseq_seconds": 3.0, "logseq_encode_seconds": 40.0}
    grown["ratios"] = ratios(grown)
    old = {
        "options": OPTIONS,
        "ratios": {**_report()["ratios"], "logseq_import.logseq_seconds": {"ratio": 6.0}},
    }
    compared = against_baseline(grown, old, OPTIONS)
    assert "logseq_import.logseq_encode_seconds" in grown["ratios"]
    assert "logseq_import.logseq_encode_seconds" not in compared
    assert regressions(compared, DEFAULT_MARGIN) == {}


def test_tails_are_compared_but_not_checked() -> None:
    slow_tail = _report()
    slow_tail["retrieval"]["sizes"][0]["hybrid_retrieval"]["p95_ms"] = 48.0
    slow_tail["ratios"] = ratios(slow_tail)
    compared = against_baseline(slow_tail, _baseline(), OPTIONS)
    assert compared["retrieval.sizes.0.hybrid_retrieval.p95_ms"]["slower"] == 4.0
    assert regressions(compared, DEFAULT_MARGIN) == {}


def _workload(times: int) -> float:
    for _ in range(times):
        sum(step * step for step in range(100_000))
    return 0.0


def _cpu_time(fn: Any, *args: Any) -> float:
    began = time.thread_time()
    fn(*args)
    return (time.thread_time() - began) * 1000


def _cpu_loop() -> dict[str, float]:
    return {"cpu_loop_cpu_seconds": cpu_loop_cpu_seconds(BESIDE_CPU_REPEATS)}


def _measured(times: int) -> dict[str, Any]:
    """The workload, `times` times over, timed as the bench times the judge: in CPU time, the CPU loop's CPU
    time measured beside it. (In wall time, on the shared 2-core machine under a test suite's load, the same
    few-millisecond workload measured 2x apart in one run of three: a time slice given to a neighbour or not.)"""
    yardstick = {**YARDSTICK, **_cpu_loop()}
    beside = SectionYardsticks(yardstick, measure=_cpu_loop)
    with beside.section("judge"):
        milliseconds = statistics.median(_cpu_time(_workload, times) for _ in range(7))
    report = {
        "yardstick": {**yardstick, "beside": beside.beside},
        "judge": {"six_claims_eight_passages_median_cpu_ms": milliseconds},
    }
    report["ratios"] = ratios(report)
    return report


def test_a_function_really_made_twice_as_slow_is_caught() -> None:
    # On this machine, however busy: CPU time is what the code costs, whatever share of a core it was given.
    baseline = _baseline(_measured(1))
    doubled = against_baseline(_measured(2), baseline, OPTIONS)
    assert list(regressions(doubled, DEFAULT_MARGIN)) == ["judge.six_claims_eight_passages_median_cpu_ms"]
    again = against_baseline(_measured(1), baseline, OPTIONS)
    assert regressions(again, DEFAULT_MARGIN) == {}


def test_a_baseline_of_other_sizes_is_not_compared() -> None:
    with pytest.raises(BaselineError, match=r"sizes \[1000\] then, \[1000, 10000\] now"):
        against_baseline(_report(), _baseline(), {**OPTIONS, "sizes": [1000, 10000]})


def test_a_missing_or_unreadable_baseline_says_what_to_do(tmp_path: Path) -> None:
    missing = tmp_path / "baseline.json"
    with pytest.raises(BaselineError) as error:
        baseline_load(missing)
    assert str(error.value) == BASELINE_MISSING.format(path=missing)
    missing.write_text("{not json", encoding="utf-8")
    with pytest.raises(BaselineError, match="cannot be read"):
        baseline_load(missing)


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """`python -m bench` with its measuring replaced by a report whose code is slowed by the last factor."""
    slowdowns = [1.0]

    def report_measure(**options: Any) -> dict[str, Any]:
        report = _report(slower=slowdowns[-1])
        del report["ratios"]
        return report

    monkeypatch.setattr(cli, "report_measure", report_measure)
    return slowdowns


def test_write_baseline_stores_the_ratios_with_date_commit_and_machine(
    tmp_path: Path, measured: list[float], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "baseline.json"
    assert cli.main(["--smallest", "--baseline", str(path), "--write-baseline"]) == 0
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", stored["measured"])
    assert re.fullmatch(r"[0-9a-f]{40}", stored["commit"])
    assert stored["machine"] == {"cpus": 2}
    assert stored["options"]["sizes"] == [1000]
    assert stored["ratios"]["import.seconds"]["ratio"] == 12.0
    assert "Wrote the baseline" in capsys.readouterr().err


def test_check_baseline_fails_naming_the_slower_figures(
    tmp_path: Path, measured: list[float], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "baseline.json"
    assert cli.main(["--smallest", "--baseline", str(path), "--write-baseline"]) == 0
    capsys.readouterr()
    measured.append(1.2)
    assert cli.main(["--smallest", "--baseline", str(path), "--check-baseline"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["against_baseline"]["import.seconds"]["change"] == 1.2
    measured.append(2.0)
    assert cli.main(["--smallest", "--baseline", str(path), "--check-baseline"]) == 1
    error = capsys.readouterr().err
    assert "import.seconds 2.0x" in error
    assert "retrieval.sizes.0.hybrid_retrieval.p50_ms 2.0x" in error
    assert "judge" not in error
    # A wider margin lets it pass.
    assert cli.main(["--smallest", "--baseline", str(path), "--check-baseline", "2.5"]) == 0


def test_a_figure_slower_in_one_run_only_is_measured_again_and_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "baseline.json"
    slowdowns = [1.0, 2.0, 1.1, 1.0]  # the baseline, a busy moment in the checked run, then two quiet runs
    sections: list[list[str]] = []

    def report_measure(**options: Any) -> dict[str, Any]:
        sections.append(options["only"])
        report = _report(slower=slowdowns.pop(0))
        del report["ratios"]
        return report

    monkeypatch.setattr(cli, "report_measure", report_measure)
    assert cli.main(["--smallest", "--baseline", str(path), "--write-baseline"]) == 0
    capsys.readouterr()
    assert cli.main(["--smallest", "--baseline", str(path), "--check-baseline"]) == 0
    printed = capsys.readouterr()
    # Only the sections of the flagged figures were measured again (the sample garden's import is in every run).
    assert sections[2:] == [["retrieval"], ["retrieval"]]
    assert json.loads(printed.out)["measured_again"]["import.seconds"] == [2.0, 1.1, 1.0]
    assert "Measured again, within 1.6x of the baseline after all: " in printed.err
    assert "import.seconds 1.1x (2.0x, 1.1x, 1.0x)" in printed.err
    assert "Slower than the baseline" not in printed.err


def test_a_figure_slower_in_two_runs_of_three_fails_and_quiet_ones_are_not_measured_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "baseline.json"
    slowdowns = [1.0, 2.0, 1.0, 2.2, 1.0, 1.0]
    runs = []

    def report_measure(**options: Any) -> dict[str, Any]:
        runs.append(options["only"])
        report = _report(slower=slowdowns.pop(0))
        del report["ratios"]
        return report

    monkeypatch.setattr(cli, "report_measure", report_measure)
    assert cli.main(["--smallest", "--baseline", str(path), "--write-baseline"]) == 0
    assert cli.main(["--smallest", "--baseline", str(path), "--check-baseline"]) == 1
    assert "import.seconds 2.0x (2.0x, 1.0x, 2.2x)" in capsys.readouterr().err
    assert len(runs) == 4
    # A quiet check measures nothing again.
    assert cli.main(["--smallest", "--baseline", str(path), "--check-baseline"]) == 0
    assert len(runs) == 5


def test_check_baseline_without_a_baseline_fails_with_a_message_not_a_traceback(
    tmp_path: Path, measured: list[float], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nowhere.json"
    assert cli.main(["--smallest", "--baseline", str(path), "--check-baseline"]) == 1
    assert capsys.readouterr().err.strip() == BASELINE_MISSING.format(path=path)
    # Without the check, a run just says so and succeeds.
    assert cli.main(["--smallest", "--baseline", str(path)]) == 0
    assert "No baseline at" in capsys.readouterr().err
