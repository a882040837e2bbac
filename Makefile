# The two commands a fresh machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo demo-cluster test lint docs bench bench-policies bench-check bench-live parity clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Runs the example task list offline on the simulator; `harness run` ends by printing the
# morning summary. Exit 1 (some task not fully passing) is a normal night; anything else
# fails the target. The seed is one whose night shows the ratchet reverting a regression.
# Every demo is the same first night: the last demo's run store and shipped files
# (tasks/example/out/, which a night would take as its starting point) are removed first.
DEMO_SEED ?= 2
demo: $(STAMP)
	@rm -rf runs/demo tasks/example/out
	@$(BIN)/harness run tasks/example/tasks.yaml --provider sim --seed $(DEMO_SEED) \
	  --run-dir runs/demo --log-level warning; \
	  rc=$$?; if [ $$rc -gt 1 ]; then exit $$rc; fi
	@echo "Full summary: runs/demo/latest/summary.html · events: runs/demo/latest/events.jsonl"
	@echo "Again: $(BIN)/harness summary runs/demo (or: . $(BIN)/activate; harness --help)"

# The same night across two workers on Temporal (docs/scale.md): needs the scale extras.
demo-cluster: $(STAMP)
	@$(BIN)/python -m pip install --quiet -e '.[scale,scale-test]'
	@$(BIN)/python -m harness.scale.demo $(DEMO_SEED); \
	  rc=$$?; if [ $$rc -gt 1 ]; then exit $$rc; fi
	@echo "Full summary: runs/demo-cluster/latest/summary.html"

# The suite runs across TEST_WORKERS processes (pytest-xdist; tests spend most of their time
# waiting on sandboxed subprocesses, so more workers than cores pays). TEST_WORKERS=0: serial.
TEST_WORKERS ?= 4
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

# The parity corpus (docs/parity.md): real libraries' own suites, each library served as its
# own port through a live night against a fake vendor, held to plain pytest test by test. The
# pinned sdists are downloaded into .parity-cache/ on first use. QUIXBUGS names a QuixBugs
# checkout or git directory (default: .parity-cache/QuixBugs when present); `make test` runs
# the same test.
QUIXBUGS ?= $(firstword $(HARNESS_QUIXBUGS) $(abspath $(wildcard .parity-cache/QuixBugs)))
parity: $(STAMP)
	HARNESS_QUIXBUGS=$(QUIXBUGS) $(BIN)/python -m pytest -n 2 -rxXs tests/parity

lint: $(STAMP)
	$(BIN)/ruff check harness tests bench
	$(BIN)/ruff format --check harness tests bench

# The documentation site (mkdocs.yml), strict: a broken link or anchor, or a page missing
# from the navigation, fails the build (tests/test_docs.py runs the same build in `make test`).
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir .site

bench: $(STAMP)
	$(BIN)/python -m bench

# The policy table, the calibration and the sensitivity sweep only (no timed nights), at the
# committed record's settings (bench/results/latest.json "settings": 96 task-nights per
# policy, the sweep on seed 0); BENCH_POLICIES_ARGS= (empty) runs the defaults instead.
BENCH_POLICIES_ARGS ?= --tasks 24 --seeds 4 --sensitivity-seeds 1 --no-sweep-choices --core-variants
bench-policies: $(STAMP)
	$(BIN)/python -m bench --policies-only $(BENCH_POLICIES_ARGS)

# The committed record (bench/results/latest.json) against its promises; not part of `test`.
bench-check: $(STAMP)
	$(BIN)/python -m pytest -q tests/bench/check_results.py

# The same policy comparison on the live providers (real money): tasks/example, every night
# together under a hard cap (BENCH_LIVE_CAP_USD, default $5). Without ANTHROPIC_API_KEY and
# GEMINI_API_KEY (or GOOGLE_API_KEY) it says what to set and exits 0. Never part of `test`.
# BENCH_LIVE_ARGS=--context runs the context tools A/B (bench/context.py) instead.
BENCH_LIVE_CAP_USD ?= 5
BENCH_LIVE_ARGS ?=
bench-live: $(STAMP)
	$(BIN)/python -m bench --live --cap-usd $(BENCH_LIVE_CAP_USD) $(BENCH_LIVE_ARGS)

clean:
	rm -rf $(VENV) runs .pytest_cache .site
