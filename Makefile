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

DEMO_STAMP := $(VENV)/.installed-demo
# --no-compile: bytecode is written on first import, for the modules a run imports, instead
# of for every file of torch, ray and the rest at install (measured: half the install time).
PIP_INSTALL := $(PY) -m pip install -q --no-compile

venv: $(STAMP)

# Re-install only when the dependency list changes.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PIP_INSTALL) -e '.[train,ray,dev]' --config-settings editable_mode=compat
	@touch $(STAMP) $(DEMO_STAMP)

# The demo needs no Ray and no test tools: it installs only `train` (a later `make test`
# adds the rest to the same .venv); a full install covers it.
$(DEMO_STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@if [ -f $(STAMP) ] && [ ! pyproject.toml -nt $(STAMP) ]; then touch $(DEMO_STAMP); else \
	  $(PY) -m pip install -q --upgrade pip && \
	  $(PIP_INSTALL) -e '.[train]' --config-settings editable_mode=compat && \
	  touch $(DEMO_STAMP); fi

docker:
	@bash scripts/ensure-docker.sh

# testlib.h: the pinned copy, fetched and hash-checked where its host is reachable (elsewhere one
# line says so and how to give a copy); the image and the process engine then carry the same file.
image: $(DEMO_STAMP) docker
	-@$(PY) -m sandbox testlib fetch >/dev/null
	$(PY) -m sandbox image ensure

# The `openai` backend's test server env (.venv-serve, about a minute of pip) builds in the
# background while the first tests run; the test that needs it waits on its lock.
test: venv image
	@bash scripts/serve-env.sh >/dev/null 2>&1 &
	$(PY) -m pytest -q --durations=40 tests

# On a bare machine the virtualenv and the Docker engine install side by side (pip and apt
# fetch and unpack at once); scripts/demo.sh then builds the sandbox image in the background
# while Prefect starts and the flow's first stages run (the judge waits for it).
demo:
	@$(MAKE) --no-print-directory -j2 $(DEMO_STAMP) docker
	bash scripts/demo.sh

bench: venv image
	@for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean-cache:
	-bash scripts/demo.sh --stop-server
	rm -rf .cache out
