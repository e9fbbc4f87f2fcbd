# The two commands: `make demo` (the main job, end to end) and `make test`.
# Both bootstrap what they need and are idempotent: a second run reuses it all.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help venv docker image test test-fast demo bench clean-cache

help:
	@echo "make demo   - run build-aletheia-train end to end on the bundled problems (local Prefect + Docker)"
	@echo "make test   - run the test suite (bootstraps .venv, the Docker engine and the sandbox image)"
	@echo "make bench  - run the benchmarks in bench/ (prints ratios)"

venv: $(STAMP)

# Re-install only when the dependency list changes.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[train,ray,dev]' --config-settings editable_mode=compat
	@touch $(STAMP)

docker:
	@bash scripts/ensure-docker.sh

image: venv docker
	$(PY) -m sandbox image ensure

test: image
	$(PY) -m pytest -q tests

demo: image
	bash scripts/demo.sh

bench: image
	@for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean-cache:
	-bash scripts/demo.sh --stop-server
	rm -rf .cache out
