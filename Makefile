# hybridops-tf developer entry points. Every target builds .venv from nothing when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MODULE ?= modules/sim/network
ARGS ?=
HYOPS := $(BIN)/hyops

.PHONY: install test unit integration demo lint bench reliability apply destroy status clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[sim,test]'
	touch $(STAMP)

# The crash matrix, the races and the stack kills (timing-driven SIGSTOP/SIGKILL of live
# processes) run in `make reliability`, which also writes docs/reliability.md.
RELIABILITY_ONLY := --ignore=tests/reliability/test_crash_matrix.py \
	--ignore=tests/reliability/test_concurrency.py --ignore=tests/reliability/test_stacks.py

test: install
	$(BIN)/python -m pytest -q -m "not reliability" $(RELIABILITY_ONLY) tests

unit: install
	$(BIN)/python -m pytest -q tests/unit

integration: install
	$(BIN)/python -m pytest -q tests/integration

demo: install
	$(BIN)/python scripts/demo.py

lint: install
	$(BIN)/pip install --quiet ruff
	$(BIN)/ruff check hybridops_tf tests scripts bench

reliability: install
	$(BIN)/python scripts/reliability.py

# Byte-compile first, as `pip install` does for a regular install: an editable install run
# with PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every module on every command.
bench: install
	$(BIN)/python -m compileall -q hybridops_tf
	$(BIN)/python bench/run.py

apply: install
	$(HYOPS) apply $(MODULE) $(ARGS)

destroy: install
	$(HYOPS) destroy $(MODULE) $(ARGS)

status: install
	$(HYOPS) status --all

clean:
	rm -rf $(VENV) .hyops
