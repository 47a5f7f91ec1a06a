# accordkit — everything a newcomer needs is `make report` and `make test` (`make test-all` in CI).
# Both set up .venv on first use (uv, from the hashed uv.lock), offline-safe afterwards.

PYTHON ?= python3
VENV := .venv
UV_VERSION := 0.13.9
UV_HOME := .cache/uv-tool
UV := $(shell command -v uv 2>/dev/null || echo $(UV_HOME)/bin/uv)
OUT ?= reports/sample

export HF_HOME ?= $(CURDIR)/.cache/huggingface
export ACCORDKIT_CACHE_DIR ?= $(CURDIR)/.cache/accordkit
export LITELLM_LOCAL_MODEL_COST_MAP := True
export MPLBACKEND := Agg
export PYTHONHASHSEED := 0
# Small matrix products in the bootstrap are slower with BLAS threads on a 2-core machine.
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: setup test test-all test-install report lab lint sample bench clean help

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(UV_HOME)/bin/uv:
	$(PYTHON) -m venv $(UV_HOME)
	$(UV_HOME)/bin/pip install --quiet --only-binary=:all: "uv==$(UV_VERSION)"

# --compile-bytecode: this machine sets PYTHONDONTWRITEBYTECODE=1, so without compiled files
# every interpreter (CLI, papermill kernel, test subprocess) recompiles pandas, litellm ... on import.
# `setup` compiles accordkit's own modules the same way (only changed files; 0.15 s per process).
# VENV=<an environment> (a conda one: VENV=$$CONDA_PREFIX) runs every target with that
# environment's Python and accordkit instead of creating .venv: nothing else is installed.
ifeq ($(VENV),.venv)
$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --extra dev --compile-bytecode --python $(PYTHON)
	@touch $@

setup: $(VENV)/.synced  ## create .venv from uv.lock (once)
	@$(VENV)/bin/python -m compileall -q accordkit >/dev/null
else
setup:
	@test -x "$(VENV)/bin/accordkit" || { echo "make: $(VENV) has no accordkit (conda: conda env create -f environment.yml)"; exit 1; }
endif

# make test: the fast default (unit tests, doctests): no papermill kernel, Ray, Chromium or
# new process (markers notebook, ray, browser, cli, slow; tests/conftest.py adds them from
# what a test uses). Test paths named in PYTEST_ARGS run whole. make test-all: everything (CI),
# on TEST_WORKERS pytest-xdist workers (--dist loadgroup: the tests sharing a report built once
# per session, Ray, or one document's examples share a worker; tests/conftest.py groups them).
TEST_WORKERS ?= 2
test: setup  ## the fast default: unit tests and doctests, no kernel/Ray/browser/process (offline)
	HF_HUB_OFFLINE=1 $(VENV)/bin/python -m pytest -m "not install" --fast $(PYTEST_ARGS)

test-all: setup  ## the whole suite, what CI runs (offline; the install test is its own target)
	HF_HUB_OFFLINE=1 $(VENV)/bin/python -m pytest -m "not install" -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

test-install: setup  ## build the wheel, pip-install it in a fresh venv, report from it (offline)
	HF_HUB_OFFLINE=1 $(VENV)/bin/python -m pytest -m install tests/test_install.py $(PYTEST_ARGS)

report: setup  ## build the HTML report for the embedded sample data in reports/sample/ (only that folder is replaced)
	HF_HUB_OFFLINE=$${HF_HUB_OFFLINE:-1} $(VENV)/bin/accordkit report --out $(OUT) $(REPORT_ARGS)

LAB_DIR ?= notebooks
lab: setup  ## start JupyterLab on 127.0.0.1 with the notebooks (LAB_ARGS="--port=N ..." to add options)
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 --no-browser --allow-root --notebook-dir=$(LAB_DIR) $(LAB_ARGS)

lint: setup  ## ruff
	$(VENV)/bin/ruff check accordkit tests benchmarks

sample: setup  ## regenerate data/sample (bit-identical for a given seed)
	HF_HUB_OFFLINE=1 $(VENV)/bin/accordkit synth --out data/sample --seed 0

clean:  ## remove the environment, the caches and the sample report (other folders under reports/ are kept)
	rm -rf $(VENV) .cache reports/sample
