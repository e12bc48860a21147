# The two commands: `make run` and `make test`. Everything else is a helper for them.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CALIBRATE_STAMP := $(VENV)/.installed-calibrate

.PHONY: run test check bench bench-baseline load eval calibrate install browser screenshot clean

run: $(STAMP)
	$(PY) -m config.devstack run

test: $(STAMP) browser
	$(PY) -m config.devstack test

# The quick loop while developing: ruff, mypy and the tests not marked slow (browser, e2e, faults, stress, fuzz).
check: $(STAMP)
	$(PY) -m config.devstack check -m "not slow"

bench: $(STAMP)
	$(PY) -m config.devstack exec -- python -m bench

# Rewrite bench/baseline.json: the yardstick ratios at the smallest sizes, which make test checks each run against.
bench-baseline: $(STAMP)
	$(PY) -m config.devstack exec -- python -m bench --smallest --write-baseline

# 50 concurrent readers for 60 seconds against a local server (127.0.0.1 only), then answers streamed to 1 and
# 50 readers (time to first word); fails on any error.
load: $(STAMP)
	$(PY) -m config.devstack exec -- python -m bench.loadtest --prepare
	$(PY) -m config.devstack exec -- python -m bench.loadtest --stream --seconds 20

# The offline judge: score it on ../shared/eval (balanced accuracy, AUC, leave-one-domain-out), or retrain it:
# calibrate writes params.json from the benchmarks, then retrains this garden's judge with its editors' reviews.
eval: $(CALIBRATE_STAMP)
	$(PY) -m evaluation.calibration.evaluate

calibrate: $(CALIBRATE_STAMP)
	$(PY) -m evaluation.calibration.train
	$(PY) -m config.devstack exec -- python manage.py calibrate_judge

install: $(STAMP)

# The README's screenshot (docs/images/answer.png) taken again, of the answer to the first question it suggests:
# after a change to the answer page.
screenshot: $(STAMP) browser
	README_SCREENSHOT=1 $(PY) -m config.devstack exec -- python -m pytest -q -m slow \
		"tests/e2e/test_browser.py::test_the_readme_screenshot_is_the_answer_to_its_first_question"

# The browser tests drive Debian's Chromium (a download of Playwright's own browser cannot work here).
browser:
	@command -v chromium >/dev/null || { test "$$(id -u)" = 0 && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		{ echo "Install Debian's chromium package (as root: apt-get install chromium) for the browser tests."; exit 1; }

# torch first, pinned to the CPU build on this machine's disk, so nothing pulls a multi-GB CUDA build.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[dev]"
	touch $(STAMP)

# The calibrate extra (scikit-learn), which only eval and calibrate use; dev includes it, so this usually finds
# it installed already.
$(CALIBRATE_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[calibrate]"
	touch $(CALIBRATE_STAMP)

clean:
	rm -rf .run
