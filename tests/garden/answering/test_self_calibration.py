"""The refusal gate calibrated on probes of the garden, without a golden set: the shipped out-of-scope probes,
the thresholds stored and in force (after a golden set's), the logs page, and the task queued after a big import."""

import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command

from garden import tasks
from garden.answering.retrieval import Candidates, PassageHit, Thresholds, calibration_in_force, select
from garden.answering.retrieval_report import (
    Observed,
    Selections,
    calibrate,
    calibration_store,
    measure,
    observe,
)
from garden.answering.self_calibration import (
    PROBES_FILE,
    Probe,
    garden_self_calibrate,
    heading_of,
    in_scope_probes,
    out_of_scope_load,
    out_of_scope_probes,
    probes_observe,
)
from garden.golden import OUT_OF_SCOPE, GoldenEntry, golden_load
from garden.models import CalibrationSource, Passage, RetrievalCalibration
from garden.sync import garden_import
from tests.factories import garden_write, login

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def golden():
    return golden_load()


def test_the_probe_file_holds_at_least_150_distinct_questions():
    questions = out_of_scope_load()
    assert len(questions) >= 150
    assert len({q.casefold() for q in questions}) == len(questions)
    assert all(q.endswith("?") and len(q.split()) >= 3 for q in questions)
    assert "# history" in PROBES_FILE.read_text(encoding="utf-8")  # comments are left out, not asked


def test_no_probe_is_answered_on_the_sample_garden_with_the_golden_sets_thresholds(golden):
    thresholds = calibrate(observe(golden))
    observed = probes_observe(out_of_scope_probes(1000))
    answered = [
        item.question.question for item in observed if not measure([item], thresholds)["out_of_scope_refused"]
    ]
    assert answered == []


def test_an_in_scope_probe_is_made_from_a_title_and_heading_and_its_passage_is_held_out():
    assert heading_of("## Boiler certificates\n\nEach steam locomotive has a boiler certificate.") == (
        "Boiler certificates"
    )
    probes = in_scope_probes(20)
    assert len(probes) == 20
    assert probes[0].held_out is not None
    held = Passage.objects.get(pk=probes[0].held_out)
    assert held.article.title in probes[0].question.question
    assert probes[0].question.expected_articles == (held.article.slug,)
    observed = probes_observe(probes)
    for probe, item in zip(probes, observed, strict=True):
        assert probe.held_out not in {hit.passage_id for hit in item.candidates.hits}
    # Without holding it out the passage it was made from is among its candidates.
    whole = probes_observe([Probe(p.question) for p in probes])
    assert any(
        p.held_out in {h.passage_id for h in w.candidates.hits} for p, w in zip(probes, whole, strict=True)
    )


def _asked(name: str, category: str, vector_score: float) -> Observed:
    """A question whose one hit scores `vector_score` (no words in common: its text score is 0)."""
    hit = PassageHit(passage_id=hash(name), article_id=hash(name), vector_score=vector_score, text_score=0.0)
    candidates = Candidates([], [], [hit], set(), np.zeros(384, np.float32))
    return Observed(GoldenEntry(name, category, name + "?", ()), candidates)


def _fitted(observed: list[Observed], **fit: float) -> tuple[float, float]:
    figures = measure(observed, calibrate(observed, **fit))
    return figures["out_of_scope_refused"], figures["in_scope_answered"]


def test_a_probe_refused_counts_as_much_as_a_probe_answered():
    # 20 in-scope probes, one of them weak (0.40); of 100 general-knowledge probes, 2 close (0.45), 98 far off.
    observed = [_asked(f"in-{n}", "single_fact", 0.40 if n == 0 else 0.50 + n / 100) for n in range(20)]
    observed += [_asked(f"out-{n}", OUT_OF_SCOPE, 0.45 if n < 2 else 0.30) for n in range(100)]
    # Refusing the two close ones would refuse one reader's question in 20: 2 % more refused for 5 % fewer answered.
    assert _fitted(observed, missed=0.05) == (0.98, 1.0)
    # With 10 close ones, answering the weak probe would let them all in: it is refused, within `missed`.
    observed = [_asked(f"in-{n}", "single_fact", 0.40 if n == 0 else 0.50 + n / 100) for n in range(20)]
    observed += [_asked(f"out-{n}", OUT_OF_SCOPE, 0.45 if n < 10 else 0.30) for n in range(100)]
    assert _fitted(observed, missed=0.05) == (1.0, 0.95)
    # Never beyond `missed`; and refusals beyond `enough` are worth nothing.
    assert _fitted(observed, missed=0.0) == (0.90, 1.0)
    assert _fitted(observed, missed=0.05, enough=0.90) == (0.90, 1.0)


def test_calibration_s_shared_selections_are_what_select_makes_at_every_setting():
    # Hits of six articles (five are counted), some scored exactly on the thresholds calibrate tries, in a ranked order that is
    # not the order of either score; one question with a topic (never refused) and one with no hit at all.
    random = np.random.default_rng(7)
    observed = []
    for number in range(12):
        scores = [
            (
                round(random.uniform(0.15, 0.75), 2),
                round(random.choice([0, 0.35, 0.5, random.uniform(0, 1)]), 3),
            )
            for _ in range(9)
        ]
        hits = [PassageHit(n, n % 6, vector, text) for n, (vector, text) in enumerate(scores)]
        random.shuffle(hits)
        topics = [1] if number == 0 else []
        observed.append(
            Observed(
                GoldenEntry(f"q{number}", "single_fact", "?", ()),
                Candidates(topics, [], hits if number != 1 else [], set(), np.zeros(384, np.float32)),
            )
        )
    selections = Selections(observed)
    for vector in np.arange(0.20, 0.70, 0.01):
        for text in np.arange(0.30, 1.05, 0.05):
            thresholds = Thresholds(vector=round(float(vector), 2), text=round(float(text), 2))
            fresh = [select(item.candidates, thresholds, max_articles=5, max_sources=0) for item in observed]
            shared = selections.at(thresholds)
            assert [(r.articles, r.empty) for r in shared] == [(r.articles, r.empty) for r in fresh], (
                thresholds
            )


@pytest.mark.slow
def test_self_calibration_stores_thresholds_that_refuse_the_golden_sets_out_of_scope_questions(golden):
    calibration = garden_self_calibrate()
    assert calibration is not None and calibration.source == CalibrationSource.PROBES
    assert calibration_in_force() == calibration
    assert (
        calibration.expected["asked"]["in_scope"] > 0 and calibration.expected["asked"]["out_of_scope"] >= 150
    )
    figures = measure(observe(golden), Thresholds.in_force())
    assert figures["out_of_scope_refused"] == 1.0  # questions it never saw
    assert figures["in_scope_answered"] >= 0.9


def test_a_golden_set_calibration_wins_over_a_later_one_from_probes():
    figures = {
        "out_of_scope_refused": 1.0,
        "in_scope_answered": 1.0,
        "refusal_precision": 1.0,
        "recall_at_5": 1,
    }
    golden = calibration_store(Thresholds(0.41, 0.9), golden="golden.yaml", figures=figures, expected=figures)
    calibration_store(
        Thresholds(0.5, 0.95),
        golden="",
        figures=figures,
        expected=figures,
        source=CalibrationSource.PROBES,
        probes={"in_scope": 10, "out_of_scope": 150},
    )
    assert calibration_in_force() == golden
    assert Thresholds.in_force() == Thresholds(0.41, 0.9)


def test_the_logs_page_shows_the_probes_calibration(client):
    figures = {
        "out_of_scope_refused": 0.987,
        "in_scope_answered": 0.96,
        "refusal_precision": 1.0,
        "recall_at_5": 1,
    }
    calibration_store(
        Thresholds(0.47, 0.95),
        golden="",
        figures=figures,
        expected={**figures, "out_of_scope_refused": 0.973},
        source=CalibrationSource.PROBES,
        probes={
            "in_scope": 120,
            "out_of_scope": 150,
            "configured": {**figures, "out_of_scope_refused": 0.64},
        },
    )
    login(client, "operator")
    page = client.get("/operators/logs/").content.decode()
    assert "The refusal gate&#x27;s calibration" in page or "The refusal gate's calibration" in page
    assert "probes</span> of the garden" in page and "120 in-scope, 150 out-of-scope" in page
    assert "vector 0.47 or text 0.95" in page
    assert "98.7%" in page and "97.3%" in page and "64.0%" in page


def test_the_logs_page_shows_a_golden_set_calibration(client):
    figures = {
        "out_of_scope_refused": 1.0,
        "in_scope_answered": 0.982,
        "refusal_precision": 1.0,
        "recall_at_5": 1,
    }
    calibration_store(Thresholds(0.41, 0.9), golden="golden.yaml", figures=figures, expected=figures)
    login(client, "operator")
    page = client.get("/operators/logs/").content.decode()
    assert (
        "a golden set</span> (golden.yaml)" in page and "vector 0.41 or text 0.9" in page and "98.2%" in page
    )


def test_the_logs_page_says_when_the_settings_thresholds_hold(client):
    RetrievalCalibration.objects.all().delete()
    login(client, "operator")
    page = client.get("/operators/logs/").content.decode()
    assert "Not calibrated: a passage counts above the settings&#x27; vector 0.38" in page or (
        "Not calibrated: a passage counts above the settings' vector 0.38" in page
    )


def _notes(tmp_path: Path, count: int) -> Path:
    return garden_write(
        tmp_path / "probed",
        {
            f"Kiln {n}.md": f"The kiln number {n} fires stoneware at 1,280 degrees for {n + 9} hours."
            for n in range(count)
        },
    )


@pytest.fixture
def queued(settings, monkeypatch):
    settings.RETRIEVAL_PROBES_AFTER_IMPORT = True
    calls: list[dict[str, object]] = []
    monkeypatch.setattr(tasks.self_calibrate, "apply_async", lambda **options: calls.append(options))
    return calls


def test_the_self_calibration_is_queued_after_an_import_that_changed_much_of_the_garden(
    tmp_path, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        report = garden_import([_notes(tmp_path, 14)])  # 14 new notes beside the sample's 51: over a fifth
    assert report.created == 14
    assert queued == [{"retry": False}]


def test_it_is_not_queued_after_a_small_import(tmp_path, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        report = garden_import([_notes(tmp_path, 2)])
    assert report.created == 2
    assert queued == []


@pytest.mark.slow
def test_retrieval_report_self_calibrates_and_says_a_golden_set_stays_in_force():
    figures = {
        "out_of_scope_refused": 1.0,
        "in_scope_answered": 1.0,
        "refusal_precision": 1.0,
        "recall_at_5": 1,
    }
    calibration_store(Thresholds(0.41, 0.9), golden="golden.yaml", figures=figures, expected=figures)
    out = StringIO()
    call_command("retrieval_report", "--self-calibrate", stdout=out)
    report = json.loads(out.getvalue())
    stored = RetrievalCalibration.objects.get(source=CalibrationSource.PROBES)
    assert report["stored"].startswith(
        f"Stored for {stored.embedded_by} from {report['probes']['in_scope']} in-scope"
    )
    assert f"vector {stored.vector_threshold}, text {stored.text_threshold}" in report["stored"]
    assert report["in_force"].startswith("The golden-set calibration of ")
    assert (
        report["self_calibrated"]["out_of_scope_refused"] == stored.expected["probes"]["out_of_scope_refused"]
    )
