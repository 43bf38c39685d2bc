# Two commands for a newcomer: `make run` and `make test`. Both install everything first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PY_STAMP := $(VENV)/.installed
NPM_STAMP := node_modules/.installed
SYS_STAMP := .system-deps-checked

.PHONY: install run test test-fast lint bench bench-sandbox bench-children bench-judging bench-worker bench-corpus bench-publish bench-submit bench-pipeline bench-pages clean

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
	$(PY) bench/sandbox.py

bench-children: install
	$(PY) bench/children.py

bench-judging: install
	$(PY) bench/judging.py

bench-worker: install
	$(PY) bench/worker.py

bench-corpus: install
	$(PY) bench/corpus.py

bench-publish: install
	$(PY) bench/publish.py

bench-submit: install
	$(PY) bench/submit.py --instructions

bench-pipeline: install
	$(PY) bench/pipeline.py

bench-pages: install
	$(PY) bench/pages.py

clean:
	rm -rf $(VENV) node_modules $(SYS_STAMP) staticfiles
