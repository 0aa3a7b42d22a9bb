# postforget-lmeval developer commands. Every target installs what it needs into .venv first.
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-stamp
# CPU wheel of torch (any other torch spec pulls several GB of CUDA wheels).
TORCH   ?= torch==2.13.0

.PHONY: install test test-demo test-fast demo bench tasks check-tasks wheel clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(TORCH)
	$(PY) -m pip install -q -e '.[dev,hf]'
	touch $@

install: $(STAMP)

## The README's test command (CI runs it through .ci/run), the quick demo end to end included.
test: $(STAMP)
	$(PY) -m pytest -q

## Only the quick demo end to end (about 3 minutes), with assertions on the forgetting it measures.
test-demo: $(STAMP)
	$(PY) -m pytest -q -m demo

## Unit tests only: skips the tests that run lm-eval end to end on a tiny model.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow and not demo"

## The main job: a real before/after forgetting experiment on CPU (offline, a few minutes).
demo: $(STAMP)
	$(VENV)/bin/postforget demo

## Pairing throughput and memory on generated multi-GB sample logs.
bench: $(STAMP)
	$(PY) scripts/bench_pairing.py

## Regenerate task_configs/ from the catalog; check-tasks fails if the committed files are stale.
tasks: $(STAMP)
	$(PY) -m postforget_lmeval.taskgen

check-tasks: $(STAMP)
	$(PY) -m postforget_lmeval.taskgen --check

wheel: $(STAMP)
	$(PY) -m pip wheel --no-deps --no-build-isolation -w dist .

clean:
	rm -rf dist build *.egg-info demo_out
