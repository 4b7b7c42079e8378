# One command sets up and runs each job on a fresh machine (Python >= 3.10 on the PATH).
#   make demo   set up, then the main job: a quick reproduction of all five papers on the
#               best device present (reports in reproductions/)
#   make test   set up, then the test suite (GPU and slow tests: make test-gpu / test-slow)
#   make docs   set up, then build the documentation site into site/
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Pinned: any other torch request pulls a multi-GB CUDA build on CPU-only machines.
TORCH  ?= torch==2.13.0
# CUDA builds of torch bring Triton; on CPU-only machines the tests run the engine's fused
# kernels in Triton's interpreter, so a CPU build gets this pinned Triton added.
TRITON ?= triton==3.9.0

.PHONY: setup test test-gpu test-slow demo docs clean clean-kernels

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "$(TORCH)"
	$(BIN)/python -c "import triton" 2>/dev/null || $(BIN)/python -m pip install --quiet --disable-pip-version-check "$(TRITON)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[test,docs]"
	touch $@

setup: $(VENV)/.installed

# The default run spreads the test files over worker processes (pytest-xdist), one per core,
# at most 4 (TEST_WORKERS=0: all in this process).
TEST_WORKERS ?= auto

test: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --dist loadfile

test-gpu: setup
	$(BIN)/python -m pytest -m gpu

test-slow: setup
	$(BIN)/python -m pytest -m "slow and not gpu"

docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

demo: setup
	$(BIN)/heuriscale reproduce all --scale quick --out reproductions

clean: clean-kernels
	rm -rf $(VENV) .pytest_cache site

# The native kernels' Numba disk cache (stamped with every kernel source: engine/kernels/cpu_cache.py).
clean-kernels:
	find src -name '*.nbi' -delete -o -name '*.nbc' -delete
