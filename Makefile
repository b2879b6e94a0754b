# agui-gateway: the two commands of README.md.
#   make run   create .venv, install, serve on 127.0.0.1:8000 with the embedded demo route
#   make test  create .venv with the dev extras, install the Node test harnesses, run the suite

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
NODE_HARNESSES := $(wildcard tests/harness/package-lock.json tests/ui_harness/package-lock.json \
                             tests/workflow_harness/package-lock.json \
                             examples/copilotkit/package-lock.json)

.PHONY: run test lint bench fuzz faults clean node-harnesses adapter-venvs

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "agui-gateway needs Python >= 3.11 (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Three distributions, all editable: the codecs (codecs/, agui-codecs) and the conformance kit
# (conformance/, agui-conformance) first, so that the gateway's ==0.1.0 requirements on both are
# met from the repository, not an index.
# The kit's package is conformance/conformance/: from the repository root the outer folder would
# import as an empty namespace package `conformance` ahead of setuptools' editable finder, so the
# kit is installed in compat mode (a path entry, which a regular package wins with).
KIT_EDITABLE := --config-settings editable_mode=compat
$(VENV)/.installed: pyproject.toml codecs/pyproject.toml conformance/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ./codecs
	$(BIN)/python -m pip install --quiet -e ./conformance $(KIT_EDITABLE)
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml codecs/pyproject.toml conformance/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ./codecs
	$(BIN)/python -m pip install --quiet -e ./conformance $(KIT_EDITABLE)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

run: $(VENV)/.installed
	$(BIN)/agui-gateway serve --host $(HOST) --port $(PORT)

node-harnesses:
	@command -v npm >/dev/null || { echo "npm is needed for the real-client tests"; exit 1; }
	@for lock in $(NODE_HARNESSES); do \
	  dir=$$(dirname $$lock); \
	  echo "npm ci in $$dir"; \
	  (cd $$dir && npm ci --no-audit --no-fund --loglevel=error) || exit 1; \
	done

# Real adapters that cannot share the gateway's venv (conflicting pins) get one each.
AF_VENV := .venv-agent-framework
$(AF_VENV)/.installed: tests/adapters/agent_framework/requirements.txt
	$(PYTHON) -m venv $(AF_VENV)
	$(AF_VENV)/bin/python -m pip install --quiet -r $<
	touch $@

adapter-venvs: $(AF_VENV)/.installed

test: $(VENV)/.installed-dev node-harnesses adapter-venvs
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check codecs gateway conformance tests bench
	$(BIN)/ruff format --check codecs gateway conformance tests bench
	$(BIN)/mypy

# The long fuzz hunt (issue 12): >= 1,000,000 hostile inputs into every decoder, both encoders
# and the kit, bounded in time (FUZZ_SECONDS); prints the counts, writes failing inputs to
# build/fuzz/. The suite runs the short profile (tests/contracts/test_fuzz_profile.py).
FUZZ_INPUTS ?= 1000000
FUZZ_SECONDS ?= 7200
fuzz: $(VENV)/.installed-dev
	$(BIN)/python tests/fuzz/run.py --inputs $(FUZZ_INPUTS) --seconds $(FUZZ_SECONDS)

# The fault trials (issue 12 item 7): FAULT_TRIALS kill -9 trials across two replicas (resume on
# the other) and PostgreSQL / Redis outages through loopback forwarders, on the machine's
# PostgreSQL (127.0.0.1:5432, db test: a fresh schema) and Redis (a fresh key prefix); prints
# lost / duplicated / never-ended per kind and exits 1 unless all are 0 (about 30 min on a busy
# 2-core machine). The suite runs 3 trials (tests/replicas/test_fault_trials.py).
FAULT_TRIALS ?= 100
FAULT_SECONDS ?= 3600
faults: $(VENV)/.installed-dev
	$(BIN)/python bench/fault_trials.py --trials $(FAULT_TRIALS) --seconds $(FAULT_SECONDS)

# make bench: the quick profile of bench/matrix.py (about 15 min on 2 idle cores), one table at
# the end; make bench FULL=1: every wire, store and C, 8 rounds, 10,000 open streams (hours on
# 2 cores); BENCH_SERVERS=uvicorn,serve,granian adds server variants to the same run. README
# "Performance" gives each figure's command.
BENCH_SERVERS ?= uvicorn
$(VENV)/.installed-bench: $(VENV)/.installed-dev
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	touch $@

bench: $(VENV)/.installed-bench
	$(BIN)/python bench/matrix.py $(if $(FULL),--full,--quick) --servers $(BENCH_SERVERS)

clean:
	rm -rf $(VENV) $(AF_VENV) tests/harness/node_modules tests/ui_harness/node_modules .pytest_cache
