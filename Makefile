# Two commands for a newcomer: `make run` and `make test`. Both install everything first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PY_STAMP := $(VENV)/.installed
NPM_STAMP := node_modules/.installed
SYS_STAMP := .system-deps-checked

.PHONY: install run test test-fast lint bench bench-sandbox bench-children bench-judging bench-worker bench-corpus bench-publish bench-submit bench-pipeline bench-pages bench-celery-dispatch bench-fair-share bench-faults bench-fork-cow clean

install: $(SYS_STAMP) $(PY_STAMP) $(NPM_STAMP)

# apt packages: bubblewrap + libseccomp2 (sandbox), chromium (browser tests), redis (broker).
$(SYS_STAMP): scripts/install-system-deps.sh
	bash scripts/install-system-deps.sh
	touch $@

$(PY_STAMP): requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	touch $@

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

run: install
	bash scripts/run.sh

test: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) -m pytest

# The inner loop: the same checks and every test but the browser (e2e), the real Redis and
# Celery worker (stack) and the slow fuzzing (slow); the sandbox and golden suites stay in.
# Markers are in pyproject.toml. `make test` still runs everything, and CI calls it.
test-fast: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -m "not e2e and not stack and not slow"

lint: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# Benchmarks print ratios against a baseline measured in the same run; never part of `make test`.
bench: bench-sandbox bench-children bench-judging bench-worker bench-corpus bench-publish bench-submit bench-pipeline bench-pages

bench-sandbox: install
	$(PY) -m bench.sandbox

bench-children: install
	$(PY) -m bench.children

bench-judging: install
	$(PY) -m bench.judging

bench-worker: install
	$(PY) -m bench.worker

bench-corpus: install
	$(PY) -m bench.corpus

bench-publish: install
	$(PY) -m bench.publish

bench-submit: install
	$(PY) -m bench.submit --instructions

bench-pipeline: install
	$(PY) -m bench.pipeline

bench-pages: install
	$(PY) -m bench.pages

# Experiments, not part of `make bench`: the README cites their figures.
bench-celery-dispatch: install
	$(PY) -m bench.celery_dispatch

bench-fair-share: install
	$(PY) -m bench.fair_share

bench-faults: install
	$(PY) -m bench.faults

bench-fork-cow: install
	$(PY) -E -s -m bench.fork_cow

clean:
	rm -rf $(VENV) node_modules $(SYS_STAMP) staticfiles
